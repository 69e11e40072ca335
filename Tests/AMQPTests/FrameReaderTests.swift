@testable import AMQP
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The frame reader (`AMQPConnection.readFrame`, `readContent`) on bytes written by hand as a broker
/// would send them, through a real socket, and what it answers back on that socket.
@Suite("AMQP frame reader")
struct FrameReaderTests {
    @Test("a delivery split over two body frames comes out whole, with its properties, and the next frame follows")
    func deliveryInTwoBodyFrames() throws {
        var stream = BrokerBytes()
        stream.deliver(channel: 1, consumerTag: "ctag-1", deliveryTag: 42, redelivered: true, exchange: "push", routingKey: "jobs")
        stream.header(channel: 1, bodySize: 11, flags: 0x8000 | 0x1000 | 0x0080,
                      properties: BrokerBytes.shortString("application/json") + [2] + BrokerBytes.shortString("m-1"))
        stream.body(channel: 1, Array("hello ".utf8))
        stream.body(channel: 1, Array("world".utf8))
        stream.method(channel: 1, classID: 60, methodID: 80, arguments: BrokerBytes.u64(7) + [1]) // basic.ack, multiple
        let peer = try FramePeer(sending: stream.bytes)

        guard case let .deliver(channel, consumerTag, deliveryTag, redelivered, exchange, routingKey, properties, body, discarded)
            = try peer.connection.readFrame()
        else { Issue.record("expected a delivery"); return }
        #expect(channel == 1 && consumerTag == "ctag-1" && deliveryTag == 42 && redelivered)
        #expect(exchange == "push" && routingKey == "jobs")
        #expect(properties.contentType == "application/json" && properties.messageID == "m-1" && properties.persistent)
        #expect(body == Array("hello world".utf8) && discarded == nil)

        guard case let .publisherAck(_, tag, multiple) = try peer.connection.readFrame() else {
            Issue.record("expected basic.ack"); return
        }
        #expect(tag == 7 && multiple)
    }

    @Test("a body above the consumer's limit is read through and only its first 64 KiB kept")
    func bodyAboveTheLimitIsDiscarded() throws {
        let size = 70_000
        let bodyBytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var stream = BrokerBytes()
        stream.deliver(channel: 1, consumerTag: "small", deliveryTag: 1, redelivered: false, exchange: "", routingKey: "q")
        stream.header(channel: 1, bodySize: UInt64(size))
        stream.body(channel: 1, Array(bodyBytes[0..<40_000]))
        stream.body(channel: 1, Array(bodyBytes[40_000...]))
        stream.method(channel: 1, classID: 60, methodID: 80, arguments: BrokerBytes.u64(1) + [0])
        let peer = try FramePeer(sending: stream.bytes)

        guard case let .deliver(_, consumerTag, _, _, _, _, _, body, discarded) = try peer.connection.readFrame(bodyLimit: { $0 == "small" ? 1_000 : .max })
        else { Issue.record("expected a delivery"); return }
        #expect(consumerTag == "small")
        #expect(discarded == size)
        #expect(body == Array(bodyBytes[0..<AMQPConnection.keptPrefixOfDiscardedBody]))
        guard case .publisherAck = try peer.connection.readFrame() else { Issue.record("the stream lost its place"); return }
    }

    @Test("a channel.close is answered with channel.close-ok on that channel and reported with its code and text")
    func channelCloseIsAnswered() throws {
        var stream = BrokerBytes()
        stream.method(channel: 3, classID: 20, methodID: 40,
                      arguments: BrokerBytes.u16(404) + BrokerBytes.shortString("NOT_FOUND - no queue 'x'") + BrokerBytes.u16(60) + BrokerBytes.u16(20))
        let peer = try FramePeer(sending: stream.bytes)
        guard case let .channelClosed(channel, error, causedByConsume) = try peer.connection.readFrame() else {
            Issue.record("expected channelClosed"); return
        }
        #expect(channel == 3 && error.code == .channelClosed && error.status == 404)
        #expect(causedByConsume, "class 60 method 20 is basic.consume")
        #expect(error.message.contains("NOT_FOUND - no queue 'x'"))
        #expect(!peer.connection.isBroken)
        // Frame type 1, channel 3, size 4, class 20 method 41 (close-ok), frame end.
        #expect(peer.written() == [1, 0, 3, 0, 0, 0, 4, 0, 20, 0, 41, 0xCE])
    }

    @Test("a server cancel is answered with cancel-ok naming the consumer tag")
    func serverCancelIsAnswered() throws {
        var stream = BrokerBytes()
        stream.method(channel: 1, classID: 60, methodID: 30, arguments: BrokerBytes.shortString("ctag-9") + [0])
        let peer = try FramePeer(sending: stream.bytes)
        guard case let .consumerCancelled(_, consumerTag) = try peer.connection.readFrame() else {
            Issue.record("expected consumerCancelled"); return
        }
        #expect(consumerTag == "ctag-9")
        #expect(peer.written() == [1, 0, 1, 0, 0, 0, 11, 0, 60, 0, 31] + BrokerBytes.shortString("ctag-9") + [0xCE])
    }

    @Test("content that contradicts its header breaks the connection with an error that says how",
          arguments: [
              ("body frames carrying more than announced", "carried 8 bytes; the header announced 5"),
              ("a frame of another channel inside a message", "a frame of channel 2 arrived inside a message on channel 1"),
              ("a body frame where the header belongs", "expected a content header on channel 1, got frame type 3"),
              ("a content header without a method", "unexpected frame type 2 on channel 1"),
          ])
    func contradictoryContent(_ case: String, _ expected: String) throws {
        var stream = BrokerBytes()
        switch `case` {
        case "body frames carrying more than announced":
            stream.deliver(channel: 1, consumerTag: "c", deliveryTag: 1, redelivered: false, exchange: "", routingKey: "q")
            stream.header(channel: 1, bodySize: 5)
            stream.body(channel: 1, Array("12345678".utf8))
        case "a frame of another channel inside a message":
            stream.deliver(channel: 1, consumerTag: "c", deliveryTag: 1, redelivered: false, exchange: "", routingKey: "q")
            stream.header(channel: 2, bodySize: 5)
        case "a body frame where the header belongs":
            stream.deliver(channel: 1, consumerTag: "c", deliveryTag: 1, redelivered: false, exchange: "", routingKey: "q")
            stream.body(channel: 1, Array("12345".utf8))
        default:
            stream.header(channel: 1, bodySize: 5)
        }
        let peer = try FramePeer(sending: stream.bytes)
        let error = #expect(throws: AMQPError.self) { try peer.connection.readFrame() }
        #expect(error?.message.contains(expected) == true, "\(error?.message ?? "no error")")
        #expect(peer.connection.isBroken)
    }

    @Test("a stream cut inside a frame, or a frame without its end octet, is a lost connection or a library error, never a frame")
    func brokenStreams() throws {
        var stream = BrokerBytes()
        stream.method(channel: 1, classID: 60, methodID: 80, arguments: BrokerBytes.u64(7) + [0])
        let cut = try FramePeer(sending: Array(stream.bytes.dropLast(3)))
        let cutError = #expect(throws: AMQPError.self) { try cut.connection.readFrame() }
        #expect(cutError?.code == .connectionLost)

        var badEnd = stream.bytes
        badEnd[badEnd.count - 1] = 0xCD
        let bad = try FramePeer(sending: badEnd)
        let badError = #expect(throws: AMQPError.self) { try bad.connection.readFrame() }
        #expect(badError?.code == .library)
        #expect(bad.connection.isBroken)
    }
}

/// AMQP 0-9-1 frames (§4.2.3) and method arguments (§4.2.5), written out by hand.
struct BrokerBytes {
    var bytes: [UInt8] = []

    static func u16(_ value: UInt16) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }
    static func u32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }
    static func u64(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }
    static func shortString(_ text: String) -> [UInt8] { [UInt8(text.utf8.count)] + Array(text.utf8) }

    mutating func frame(type: UInt8, channel: UInt16, payload: [UInt8]) {
        bytes += [type] + Self.u16(channel) + Self.u32(UInt32(payload.count)) + payload + [0xCE]
    }

    mutating func method(channel: UInt16, classID: UInt16, methodID: UInt16, arguments: [UInt8]) {
        frame(type: 1, channel: channel, payload: Self.u16(classID) + Self.u16(methodID) + arguments)
    }

    /// basic.deliver: consumer tag, delivery tag, redelivered bit, exchange, routing key.
    mutating func deliver(channel: UInt16, consumerTag: String, deliveryTag: UInt64, redelivered: Bool, exchange: String, routingKey: String) {
        method(channel: channel, classID: 60, methodID: 60,
               arguments: Self.shortString(consumerTag) + Self.u64(deliveryTag) + [redelivered ? 1 : 0]
                   + Self.shortString(exchange) + Self.shortString(routingKey))
    }

    /// Content header: class 60, weight 0, body size, property flags, then the flagged properties in order.
    mutating func header(channel: UInt16, bodySize: UInt64, flags: UInt16 = 0, properties: [UInt8] = []) {
        frame(type: 2, channel: channel, payload: Self.u16(60) + Self.u16(0) + Self.u64(bodySize) + Self.u16(flags) + properties)
    }

    mutating func body(channel: UInt16, _ fragment: [UInt8]) {
        frame(type: 3, channel: channel, payload: fragment)
    }
}

/// A connection reading from one end of a socket pair; the test holds the other end, which has
/// already written `bytes` and shut its write side, so the reader meets end-of-stream after them.
final class FramePeer {
    let connection: AMQPConnection
    private let peer: Int32

    init(sending bytes: [UInt8]) throws {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { throw TestFailure("socketpair: errno \(errno)") }
        peer = pair[1]
        connection = try AMQPConnection(adoptingConnectedSocket: pair[0])
        // Written whole before reading starts: the streams here are far below a socket buffer.
        let sent = bytes.withUnsafeBytes { send(peer, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        guard sent == bytes.count else { throw TestFailure("the socket took \(sent) of \(bytes.count) bytes") }
        shutdown(peer, Int32(SHUT_WR))
    }

    deinit { close(peer) }

    /// What the connection wrote back so far (it is never asked to write more than a socket buffer).
    func written() -> [UInt8] {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(peer, &chunk, chunk.count, Int32(MSG_DONTWAIT))
            if count <= 0 { return received }
            received += chunk[0..<count]
        }
    }
}
