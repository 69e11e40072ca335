/// A RESP2 reply, copied out of hiredis so it outlives `freeReplyObject`.
public enum RedisReply: Sendable, Hashable {
    case string([UInt8])
    case array([RedisReply])
    case integer(Int64)
    case null
    case status(String)
    case error(String)

    public var text: String? {
        switch self {
        case let .string(bytes): String(decoding: bytes, as: UTF8.self)
        case let .status(text): text
        default: nil
        }
    }
}
