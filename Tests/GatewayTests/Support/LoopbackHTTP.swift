import NIOCore
import NIOHTTP1
import NIOPosix

/// One HTTP/1.1 request to 127.0.0.1 on a connection of its own, as a relay sender or an API
/// client makes it; the whole answer is read before it returns.
enum LoopbackHTTP {
    struct Answer: Sendable, CustomStringConvertible {
        let status: Int
        let headers: [(name: String, value: String)]
        let body: String

        func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        var description: String { "\(status) \(body)" }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func send(port: Int, _ method: HTTPMethod, _ path: String, headers: [(String, String)] = [], body: [UInt8] = []) async throws -> Answer {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(10))
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            var head = HTTPRequestHead(version: .http1_1, method: method, uri: path)
            head.headers.add(name: "Host", value: "127.0.0.1:\(port)")
            head.headers.add(name: "Content-Length", value: "\(body.count)")
            head.headers.add(name: "Connection", value: "close")
            for (name, value) in headers { head.headers.add(name: name, value: value) }
            try await outbound.write(.head(head))
            if !body.isEmpty { try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: body)))) }
            try await outbound.write(.end(nil))
            var status = 0
            var fields = [(name: String, value: String)]()
            var bytes = [UInt8]()
            for try await part in inbound {
                switch part {
                case let .head(response):
                    status = Int(response.status.code)
                    fields = response.headers.map { ($0.name, $0.value) }
                case let .body(buffer):
                    bytes += buffer.readableBytesView
                case .end:
                    return Answer(status: status, headers: fields, body: String(decoding: bytes, as: UTF8.self))
                }
            }
            throw Failure(description: "\(method) \(path): the connection closed before a whole answer")
        }
    }
}
