/// A Redis Cluster redirection error reply (cluster specification, "Redirection and resharding"):
/// `MOVED <slot> <host>:<port>` — the slot lives elsewhere for good, update the slot map; `ASK
/// <slot> <host>:<port>` — this one key is being migrated, send `ASKING` and the command there
/// once, without touching the map.
public struct ClusterRedirect: Sendable, Hashable {
    public enum Kind: Sendable, Hashable { case moved, ask }

    public var kind: Kind
    public var slot: Int
    /// The host may be empty: then it is the host of the node that answered.
    public var address: RedisNodeAddress

    public init(kind: Kind, slot: Int, address: RedisNodeAddress) {
        self.kind = kind
        self.slot = slot
        self.address = address
    }

    /// Nil for any other error text (or a malformed redirect, which is then passed on as an error).
    public init?(errorText: String) {
        let parts = errorText.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 3, let slot = Int(parts[1]), (0..<HashSlot.count).contains(slot),
              let address = RedisNodeAddress(parsing: parts[2]) else { return nil }
        switch parts[0] {
        case "MOVED": kind = .moved
        case "ASK": kind = .ask
        default: return nil
        }
        self.slot = slot
        self.address = address
    }

    /// The target with an empty host filled in from the node that sent the redirect.
    public func target(answeredBy node: RedisNodeAddress) -> RedisNodeAddress {
        address.host.isEmpty ? RedisNodeAddress(host: node.host, port: address.port) : address
    }
}
