/// Which cluster node serves each of the 16384 hash slots (masters only: the worker writes), read
/// from a `CLUSTER SLOTS` reply (available since Redis 3.0; deprecated in 7.0 for `CLUSTER SHARDS`
/// but still answered, and the only one of the two that 3.x–6.x know).
public struct ClusterSlotTable: Sendable, Hashable {
    /// The distinct masters, in the order the reply named them.
    public private(set) var nodes: [RedisNodeAddress] = []
    /// Per slot, an index into `nodes`, or -1 for a slot no node serves (the cluster is incomplete).
    private var owners: [Int16]

    public init() {
        owners = Array(repeating: -1, count: HashSlot.count)
    }

    /// - Parameter node: the node that answered; an entry with an empty host means that host
    ///   (cluster spec), an entry with host `?` (an unknown endpoint) is skipped.
    public init(slotsReply reply: RedisReply, answeredBy node: RedisNodeAddress) throws(RedisError) {
        self.init()
        guard case let .array(ranges) = reply else {
            throw RedisError(.unexpectedReply, "CLUSTER SLOTS returned \(reply)")
        }
        for range in ranges {
            guard case let .array(fields) = range, fields.count >= 3,
                  case let .integer(first) = fields[0], case let .integer(last) = fields[1],
                  0 <= first, first <= last, last < Int64(HashSlot.count),
                  case let .array(master) = fields[2], master.count >= 2,
                  let host = master[0].text, case let .integer(port) = master[1], (1...65535).contains(port) else {
                throw RedisError(.unexpectedReply, "CLUSTER SLOTS returned a malformed slot range")
            }
            if host == "?" { continue }
            let address = RedisNodeAddress(host: host.isEmpty ? node.host : host, port: Int(port))
            assign(Int(first)...Int(last), to: address)
        }
    }

    /// The master serving a slot, nil when none does.
    public func node(forSlot slot: Int) -> RedisNodeAddress? {
        let owner = owners[slot]
        return owner < 0 ? nil : nodes[Int(owner)]
    }

    /// How many slots have a node.
    public var coveredSlots: Int { owners.reduce(0) { $0 + ($1 < 0 ? 0 : 1) } }

    /// A `MOVED` says where one slot lives now; the rest of the map is refreshed separately.
    public mutating func assign(_ slots: ClosedRange<Int>, to address: RedisNodeAddress) {
        let index: Int
        if let known = nodes.firstIndex(of: address) {
            index = known
        } else {
            index = nodes.count
            nodes.append(address)
        }
        for slot in slots { owners[slot] = Int16(index) }
    }
}
