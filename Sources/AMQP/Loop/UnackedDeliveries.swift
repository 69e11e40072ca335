/// Delivery tags handed to consumers on the current consume channel and not yet acked/nacked.
///
/// Tracking them lets the owner thread coalesce acks into one `multiple` ack and drop acks for
/// tags the channel does not know (a second ack of the same tag is a channel error). The broker
/// numbers a channel's deliveries 1, 2, 3…, so the outstanding ones are a window of flags from the
/// oldest one on, not a hash set: no hashing per delivery, ack and plan.
///
/// Each outstanding tag keeps the index of the consumer it went to (`consumer(of:)`), so that the
/// acks waiting can be counted against that consumer's own prefetch window.
///
/// One delivery that stays unsettled while later ones flow would hold the window's start and grow
/// it by a flag per delivery for as long as it stays. So once the window spans far more tags than
/// it holds, the outstanding tags of its older half move to `stragglers` (a short sorted array)
/// and that half is dropped: memory follows the number of unsettled deliveries (at most the
/// prefetch), not the tags seen since the oldest.
struct UnackedDeliveries {
    /// `owners[i]` is 0 when tag `firstTag + i - head` is settled, else its consumer's index + 1.
    /// Two bytes a tag: a connection has a few consumers, and an index past `UInt16.max - 1` (never
    /// reached) is kept as that, as it only decides when acks are sent.
    private var owners: [UInt16] = []
    private var head = 0
    private var firstTag: UInt64 = 1
    /// Outstanding tags below `firstTag`, ascending, with their consumers' indices.
    private(set) var stragglers: [UInt64] = []
    private var stragglerConsumers: [UInt16] = []
    private(set) var count = 0
    /// A window spanning this many tags is looked at for stragglers (then again at twice its span).
    static let stragglerSweepSpan = 4096
    private var nextSweepSpan = Self.stragglerSweepSpan

    private var windowCount: Int { count - stragglers.count }
    /// The tags the window's flags span.
    var windowSpan: Int { owners.count - head }

    /// The oldest tag still awaiting its ack.
    var oldest: UInt64? {
        if let first = stragglers.first { return first }
        return windowCount > 0 ? firstTag : nil
    }

    func contains(_ tag: UInt64) -> Bool {
        consumer(of: tag) != nil
    }

    /// The index of the consumer an outstanding tag went to; nil when it is not outstanding.
    func consumer(of tag: UInt64) -> Int? {
        if tag < firstTag { return stragglerIndex(of: tag).map { Int(stragglerConsumers[$0]) } }
        guard let slot = slot(of: tag), owners[slot] != 0 else { return nil }
        return Int(owners[slot]) - 1
    }

    mutating func insert(_ tag: UInt64, consumer: Int = 0) {
        let owner = UInt16(clamping: max(0, consumer) + 1)
        if windowCount == 0, tag >= firstTag || stragglers.isEmpty {
            // Nothing outstanding in the window: restart it at this tag.
            owners.removeAll(keepingCapacity: true)
            head = 0
            firstTag = tag
            nextSweepSpan = Self.stragglerSweepSpan
        }
        guard tag >= firstTag else {
            // Below the window (never from a broker, which numbers upwards): kept as a straggler.
            let index = stragglers.partitioningIndex { $0 >= tag }
            if index == stragglers.count || stragglers[index] != tag {
                stragglers.insert(tag, at: index)
                stragglerConsumers.insert(owner - 1, at: index)
                count += 1
            }
            return
        }
        let end = firstTag + UInt64(windowSpan)
        guard tag >= end else {
            if let slot = slot(of: tag), owners[slot] == 0 { owners[slot] = owner; count += 1 }
            return
        }
        // Tags skipped by the broker (none in practice) are kept as settled.
        for _ in end..<tag { owners.append(0) }
        owners.append(owner)
        count += 1
        if windowSpan >= nextSweepSpan { sweepStragglers() }
    }

    mutating func remove(_ tag: UInt64) {
        if tag < firstTag {
            guard let index = stragglerIndex(of: tag) else { return }
            stragglers.remove(at: index)
            stragglerConsumers.remove(at: index)
            count -= 1
            return
        }
        guard let slot = slot(of: tag), owners[slot] != 0 else { return }
        owners[slot] = 0
        count -= 1
        compact()
    }

    /// Removes every tag ≤ `tag`; returns the largest one removed (the tag to send with
    /// `multiple`), or nil when nothing was outstanding up to there.
    mutating func removeThrough(_ tag: UInt64) -> UInt64? {
        var largest: UInt64?
        let coveredStragglers = stragglers.partitioningIndex { $0 > tag }
        if coveredStragglers > 0 {
            largest = stragglers[coveredStragglers - 1]
            stragglers.removeFirst(coveredStragglers)
            stragglerConsumers.removeFirst(coveredStragglers)
            count -= coveredStragglers
        }
        var slot = head
        while slot < owners.count, firstTag + UInt64(slot - head) <= tag {
            if owners[slot] != 0 {
                owners[slot] = 0
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
        let runLength = lengthOfOldestRun(in: wanted)
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

    /// How many of `wanted` (ascending, all outstanding) are the outstanding tags from the oldest on.
    private func lengthOfOldestRun(in wanted: [UInt64]) -> Int {
        var runLength = 0
        for straggler in stragglers {
            guard runLength < wanted.count, straggler == wanted[runLength] else { return runLength }
            runLength += 1
        }
        var slot = head
        while slot < owners.count, runLength < wanted.count {
            if owners[slot] != 0 {
                guard firstTag + UInt64(slot - head) == wanted[runLength] else { break }
                runLength += 1
            }
            slot += 1
        }
        return runLength
    }

    private func slot(of tag: UInt64) -> Int? {
        guard tag >= firstTag else { return nil }
        let offset = tag - firstTag
        guard offset < UInt64(windowSpan) else { return nil }
        return head + Int(offset)
    }

    private func stragglerIndex(of tag: UInt64) -> Int? {
        let index = stragglers.partitioningIndex { $0 >= tag }
        return index < stragglers.count && stragglers[index] == tag ? index : nil
    }

    /// Drops settled tags from the front of the window.
    private mutating func compact() {
        while head < owners.count, owners[head] == 0 {
            head += 1
            firstTag += 1
        }
        if head == owners.count {
            owners.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 4096, head * 2 > owners.count {
            owners.removeFirst(head)
            head = 0
        }
    }

    /// The window spans `nextSweepSpan` tags: when few of its older half are outstanding, they
    /// become stragglers and the half is dropped. Runs once per doubling of the span, so its scan
    /// costs O(1) a delivery.
    private mutating func sweepStragglers() {
        let half = windowSpan / 2
        var outstandingInHalf = 0
        for slot in head..<(head + half) where owners[slot] != 0 { outstandingInHalf += 1 }
        if outstandingInHalf * 8 <= half {
            for slot in head..<(head + half) where owners[slot] != 0 {
                stragglers.append(firstTag + UInt64(slot - head))
                stragglerConsumers.append(owners[slot] - 1)
            }
            owners.removeFirst(head + half)
            head = 0
            firstTag += UInt64(half)
            compact()
        }
        nextSweepSpan = max(Self.stragglerSweepSpan, windowSpan * 2)
    }
}

fileprivate extension Array {
    /// The first index whose element satisfies `belongs`, for an array where every element that
    /// does comes after every one that does not (a binary search).
    func partitioningIndex(where belongs: (Element) -> Bool) -> Int {
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            if belongs(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
