/// The two sentinel-related replies a client reads (Redis docs, "Sentinel client spec"): the
/// master's address from `SENTINEL get-master-addr-by-name`, and the role from `ROLE`, which the
/// client checks on the address it was given because a sentinel's view may be stale.
public enum SentinelReplies {
    /// `[host, port]`; nil (null reply) when the sentinel does not know the name; an error reply
    /// (`-IDONTKNOW`, `-NOAUTH`) or anything else is a RedisError naming what came back.
    public static func masterAddress(_ reply: RedisReply, masterName: String) throws(RedisError) -> RedisNodeAddress? {
        switch reply {
        case .null:
            return nil
        case let .array(parts) where parts.count == 2:
            guard let host = parts[0].text, !host.isEmpty, let portText = parts[1].text, let port = Int(portText),
                  (1...65535).contains(port) else { break }
            return RedisNodeAddress(host: host, port: port)
        case let .error(text):
            throw RedisError(.reply, "SENTINEL get-master-addr-by-name \(masterName): \(text)")
        default:
            break
        }
        throw RedisError(.unexpectedReply, "SENTINEL get-master-addr-by-name \(masterName) returned \(reply)")
    }

    /// The first element of a `ROLE` reply: `master`, `slave` or `sentinel`.
    public static func role(_ reply: RedisReply) throws(RedisError) -> String {
        if case let .array(parts) = reply, let first = parts.first?.text { return first }
        if case let .error(text) = reply { throw RedisError(.reply, "ROLE: \(text)") }
        throw RedisError(.unexpectedReply, "ROLE returned \(reply)")
    }

    /// Error replies that mean "this node cannot take writes now, ask the sentinels again":
    /// `READONLY` from a demoted master, `MASTERDOWN` from a replica cut off from its master.
    public static func meansMasterChanged(_ errorText: String) -> Bool {
        errorText.hasPrefix("READONLY") || errorText.hasPrefix("MASTERDOWN")
    }
}
