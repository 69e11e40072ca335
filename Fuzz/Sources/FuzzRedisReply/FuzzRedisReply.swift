// RESP2 bytes as a Redis server (or anything on its port) could send them: hiredis's reply reader
// gets them in two pieces (split where the last byte says), every complete reply is converted to
// `RedisReply` the way `RedisConnection` does and freed. hiredis may refuse the stream (a protocol
// error); it must not crash, and `RedisConnection.convert(_:)` (the worker's own conversion) must
// match what hiredis built.
@testable import Redis
import CHiredis

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let reader = redisReaderCreate() else { return 0 }
    defer { redisReaderFree(reader) }
    let split = size == 0 ? 0 : Int(data[size - 1]) % (size + 1)
    let pieces = [0..<split, split..<size]
    for piece in pieces {
        let fed = data.withMemoryRebound(to: CChar.self, capacity: size) { chars in
            redisReaderFeed(reader, chars + piece.lowerBound, piece.count)
        }
        guard fed == REDIS_OK else { return 0 }
        while true {
            var raw: UnsafeMutableRawPointer?
            guard redisReaderGetReply(reader, &raw) == REDIS_OK else { return 0 }
            guard let raw else { break }
            let reply = raw.assumingMemoryBound(to: redisReply.self)
            let converted = RedisConnection.convert(reply)
            check(converted, against: reply)
            freeReplyObject(raw)
        }
    }
    return 0
}

private func check(_ converted: RedisReply, against reply: UnsafeMutablePointer<redisReply>) {
    let value = reply.pointee
    switch converted {
    case let .string(bytes):
        precondition(value.type == REDIS_REPLY_STRING && bytes.count == value.len, "a bulk string lost bytes")
    case let .array(elements):
        precondition(value.type == REDIS_REPLY_ARRAY && elements.count == value.elements, "an array lost elements")
        for (index, element) in elements.enumerated() {
            if let child = value.element[index] { check(element, against: child) }
        }
    case .integer, .status, .error:
        _ = converted.text
    case .null:
        precondition(value.type == REDIS_REPLY_NIL || value.type > REDIS_REPLY_ERROR,
                     "reply type \(value.type) became null")
    }
}
