// Bytes a broker (or anything on the broker's port) could send after the handshake. They reach
// the worker's frame reader (`AMQPConnection.readFrame`, which reads a delivery's content header
// and body frames in `readContent`) through a real socket, through rabbitmq-c's own frame decoder,
// as they do in the worker. The reader must turn every input into frames or an error, never a
// crash: each call either returns a frame, or returns nil, or throws and marks the connection
// broken, after which it is not called again. A delivery's body is whole below the consumer's
// limit and cut to its first 64 KiB above it; what the reader writes back (close-ok, cancel-ok)
// is drained so a write never waits.
@testable import AMQP
#if canImport(Glibc)
import Glibc
#endif

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var pair: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { fatalError("socketpair: errno \(errno)") }
    let peer = pair[1]
    defer { close(peer) }
    // Inputs are at most -max_len (64 KiB by default), below an AF_UNIX socket's buffer; the rest of a
    // longer one is cut, which is just another input.
    _ = send(peer, data, size, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
    shutdown(peer, Int32(SHUT_WR))

    guard let connection = try? AMQPConnection(adoptingConnectedSocket: pair[0]) else { fatalError("cannot adopt the socket") }
    // Consumer tags that start with "s" get a 16-byte limit, so fuzzed deliveries take the discarding path too.
    let limit: (String) -> Int = { $0.hasPrefix("s") ? 16 : .max }
    for _ in 0..<size + 1 {
        let frame: InboundFrame?
        do {
            frame = try connection.readFrame(bodyLimit: limit)
        } catch {
            precondition(connection.isBroken, "a failed read left the connection usable: \(error)")
            break
        }
        drain(peer)
        guard let frame else { break }
        if case let .deliver(_, consumerTag, _, _, _, _, _, body, discarded) = frame {
            if let discarded {
                precondition(discarded > limit(consumerTag) && body.count == min(discarded, AMQPConnection.keptPrefixOfDiscardedBody),
                             "a discarded body of \(discarded) bytes kept \(body.count)")
            } else {
                precondition(body.count <= limit(consumerTag), "a body of \(body.count) bytes passed a limit of \(limit(consumerTag))")
            }
        }
        if connection.isBroken { break }
        connection.releaseBuffers()
    }
    return 0
}

/// Reads whatever the connection wrote back, so its next write finds room.
private func drain(_ descriptor: Int32) {
    var chunk = [UInt8](repeating: 0, count: 4096)
    while recv(descriptor, &chunk, chunk.count, Int32(MSG_DONTWAIT)) > 0 {}
}
