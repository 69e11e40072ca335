/// Delivery tags handed to consumers on the current consume channel and not yet acked/nacked.
///
/// Tracking them lets the owner thread coalesce acks into one `multiple` ack and drop acks for
/// tags the channel does not know (a second ack of the same tag is a channel error).
struct UnackedDeliveries {
    /// Tags in delivery order (ascending, as the broker numbers them); settled ones are skipped lazily.
    private var order: [UInt64] = []
    private var head = 0
    private var live: Set<UInt64> = []

    var count: Int { live.count }

    func contains(_ tag: UInt64) -> Bool { live.contains(tag) }

    mutating func insert(_ tag: UInt64) {
        order.append(tag)
        live.insert(tag)
    }

    mutating func remove(_ tag: UInt64) {
        live.remove(tag)
        compact()
    }

    /// Removes every tag ≤ `tag`; returns the largest one removed (the tag to send with
    /// `multiple`), or nil when nothing was outstanding up to there.
    mutating func removeThrough(_ tag: UInt64) -> UInt64? {
        var largest: UInt64?
        var index = head
        while index < order.count && order[index] <= tag {
            if live.remove(order[index]) != nil { largest = order[index] }
            index += 1
        }
        compact()
        return largest
    }

    /// Plans the frames for a batch of single acks: the run of oldest outstanding tags that are all
    /// in the batch becomes one `multiple` ack, the rest go one by one. Unknown tags are dropped.
    mutating func planAcks(_ tags: [UInt64]) -> [(tag: UInt64, multiple: Bool)] {
        let wanted = Set(tags.filter { live.contains($0) })
        guard !wanted.isEmpty else { return [] }
        var runEnd: UInt64?
        var runLength = 0
        var index = head
        while index < order.count {
            let tag = order[index]
            index += 1
            guard live.contains(tag) else { continue }
            guard wanted.contains(tag) else { break }
            runEnd = tag
            runLength += 1
        }
        var plan: [(tag: UInt64, multiple: Bool)] = []
        if let runEnd, runLength >= 2 {
            _ = removeThrough(runEnd)
            plan.append((runEnd, true))
        }
        for tag in wanted.sorted() where live.contains(tag) {
            live.remove(tag)
            plan.append((tag, false))
        }
        compact()
        return plan
    }

    mutating func reset() {
        self = UnackedDeliveries()
    }

    private mutating func compact() {
        while head < order.count && !live.contains(order[head]) { head += 1 }
        if head == order.count {
            order.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 4096 && head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }
}
