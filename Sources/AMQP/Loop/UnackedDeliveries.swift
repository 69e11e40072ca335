/// Delivery tags handed to consumers on the current consume channel and not yet acked/nacked.
///
/// Tracking them lets the owner thread coalesce acks into one `multiple` ack and drop acks for
/// tags the channel does not know (a second ack of the same tag is a channel error). The broker
/// numbers a channel's deliveries 1, 2, 3…, so the outstanding ones are a window of flags from the
/// oldest one on, not a hash set: no hashing per delivery, ack and plan.
struct UnackedDeliveries {
    /// `outstanding[i]` is whether tag `firstTag + i` still awaits its ack.
    private var outstanding: [Bool] = []
    private var head = 0
    private var firstTag: UInt64 = 1
    private(set) var count = 0

    /// The oldest tag still awaiting its ack.
    var oldest: UInt64? { count > 0 ? firstTag : nil }

    func contains(_ tag: UInt64) -> Bool {
        guard let slot = slot(of: tag) else { return false }
        return outstanding[slot]
    }

    mutating func insert(_ tag: UInt64) {
        if count == 0 {
            // Nothing outstanding: restart the window at this tag.
            outstanding.removeAll(keepingCapacity: true)
            head = 0
            firstTag = tag
        }
        let end = firstTag + UInt64(outstanding.count - head)
        guard tag >= end else {
            // Not ascending (never from a broker): mark it if the window covers it.
            if let slot = slot(of: tag), !outstanding[slot] { outstanding[slot] = true; count += 1 }
            return
        }
        // Tags skipped by the broker (none in practice) are kept as settled.
        for _ in end..<tag { outstanding.append(false) }
        outstanding.append(true)
        count += 1
    }

    mutating func remove(_ tag: UInt64) {
        guard let slot = slot(of: tag), outstanding[slot] else { return }
        outstanding[slot] = false
        count -= 1
        compact()
    }

    /// Removes every tag ≤ `tag`; returns the largest one removed (the tag to send with
    /// `multiple`), or nil when nothing was outstanding up to there.
    mutating func removeThrough(_ tag: UInt64) -> UInt64? {
        var largest: UInt64?
        var slot = head
        while slot < outstanding.count, firstTag + UInt64(slot - head) <= tag {
            if outstanding[slot] {
                outstanding[slot] = false
                count -= 1
                largest = firstTag + UInt64(slot - head)
            }
            slot += 1
        }
        compact()
        return largest
    }

    /// Plans the frames for a batch of single acks: the run of oldest outstanding tags that are all
    /// in the batch becomes one `multiple` ack (or a single one if it is just the oldest), the rest
    /// go one by one, or with `holdingGaps` are returned as `held` (ascending, still outstanding) to
    /// wait for the tags before them. Unknown tags are dropped (`dropped` counts them).
    mutating func planAcks(_ tags: [UInt64], holdingGaps: Bool = false)
        -> (plan: [(tag: UInt64, multiple: Bool)], held: [UInt64], dropped: Int) {
        var wanted = tags.sorted()
        var unique = 0
        for tag in wanted where unique == 0 || wanted[unique - 1] != tag {
            wanted[unique] = tag
            unique += 1
        }
        wanted.removeSubrange(unique...)
        let requested = wanted.count
        wanted.removeAll { !contains($0) }
        let dropped = requested - wanted.count
        guard !wanted.isEmpty else { return ([], [], dropped) }
        // The run: outstanding tags from the oldest on, as long as each is in the batch.
        var runLength = 0
        var slot = head
        while slot < outstanding.count, runLength < wanted.count {
            if outstanding[slot] {
                guard firstTag + UInt64(slot - head) == wanted[runLength] else { break }
                runLength += 1
            }
            slot += 1
        }
        var plan: [(tag: UInt64, multiple: Bool)] = []
        if runLength >= 1 {
            _ = removeThrough(wanted[runLength - 1])
            plan.append((wanted[runLength - 1], runLength >= 2))
        }
        let rest = wanted[runLength...]
        if holdingGaps { return (plan, Array(rest), dropped) }
        for tag in rest {
            remove(tag)
            plan.append((tag, false))
        }
        return (plan, [], dropped)
    }

    mutating func reset() {
        self = UnackedDeliveries()
    }

    private func slot(of tag: UInt64) -> Int? {
        guard tag >= firstTag else { return nil }
        let offset = tag - firstTag
        guard offset < UInt64(outstanding.count - head) else { return nil }
        return head + Int(offset)
    }

    /// Drops settled tags from the front of the window.
    private mutating func compact() {
        while head < outstanding.count, !outstanding[head] {
            head += 1
            firstTag += 1
        }
        if head == outstanding.count {
            outstanding.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 4096, head * 2 > outstanding.count {
            outstanding.removeFirst(head)
            head = 0
        }
    }
}
