/// Publisher-confirm bookkeeping for one incarnation of the publish channel.
///
/// The broker numbers publishes from 1 per channel and answers with basic.ack / basic.nack
/// (`multiple` covers every earlier sequence number). A basic.return carries no sequence number,
/// so it is matched to the oldest outstanding mandatory publish with the same exchange, routing
/// key and body size (publishes to the same destination route the same way), preferring one whose
/// properties match too; the ack that follows it then fails that publish as unroutable.
///
/// RabbitMQ may confirm out of order, and may never confirm a publish at all (one routed to a
/// quorum queue that lost its majority). So each publish has an age limit (`expire`), and a publish
/// still outstanding far behind the others moves to `stragglers`: one stuck publish never keeps
/// the slots of every later one.
///
/// Each publish is known by the token its caller gave (`Publish`: an id in tests, the request in
/// the loop); this type hands tokens back with their results and never calls them.
struct PublishConfirms<Publish> {
    typealias Settled = [(publish: Publish, result: Result<Void, AMQPError>)]

    /// What a basic.return is compared against.
    struct ReturnKey: Equatable {
        var exchange: String
        var routingKey: String
        var bodyCount: Int
        var properties: AMQPProperties
    }

    private struct Entry {
        let publish: Publish
        let returnKey: ReturnKey?
        var returned: AMQPError?
    }

    /// Outstanding publishes by sequence number: `entries[i]` is sequence `base + i`, nil once
    /// settled. Sequence numbers are consecutive, so an array indexed from `base` finds them
    /// without hashing (a dictionary costs more per publish; measured:
    /// docs/evidence/code-measurements.md#publish-confirms).
    private var entries: [Entry?] = []
    private var base: UInt64 = 1
    /// Outstanding publishes numbered below `base`.
    private var stragglers: [UInt64: Entry] = [:]
    /// Sequence numbers of mandatory publishes, oldest first (may contain settled ones).
    private var mandatory: [UInt64] = []
    private var mandatoryCompactionAt = Self.sweepSize
    /// The lowest outstanding sequence number at or above `base`.
    private var lowest: UInt64 = 1
    /// UInt64: numbered per channel incarnation, 584,000 years at a million publishes a second.
    private(set) var nextSequence: UInt64 = 1
    private(set) var outstanding = 0
    /// (when, the next sequence number then), oldest first: every publish numbered below a mark's
    /// sequence was written before its instant. Taken at most once per `markInterval`, so ages cost
    /// no clock reading per publish.
    private var marks: [(at: ContinuousClock.Instant, sequence: UInt64)] = []
    static var markInterval: Duration { .seconds(1) }
    /// `entries` is looked at for stragglers when it reaches this many slots (then at twice its size).
    static var sweepSize: Int { 4096 }
    private var nextSweepSize = Self.sweepSize

    var stragglerCount: Int { stragglers.count }
    /// Slots held for outstanding and settled publishes: what the bookkeeping costs in memory.
    var slotCount: Int { entries.count + stragglers.count + mandatory.count }

    private func index(of sequence: UInt64) -> Int? {
        guard sequence >= base, sequence < nextSequence else { return nil }
        return Int(sequence - base)
    }

    private func entry(_ sequence: UInt64) -> Entry? {
        if sequence < base { return stragglers[sequence] }
        return index(of: sequence).flatMap { entries[$0] }
    }

    private mutating func remove(_ sequence: UInt64) -> Entry? {
        if sequence < base {
            guard let entry = stragglers.removeValue(forKey: sequence) else { return nil }
            outstanding -= 1
            return entry
        }
        guard let index = index(of: sequence), let entry = entries[index] else { return nil }
        entries[index] = nil
        outstanding -= 1
        return entry
    }

    /// Records a publish that was just written; returns its sequence number.
    @discardableResult
    mutating func record(_ publish: Publish, returnKey: ReturnKey?) -> UInt64 {
        let sequence = nextSequence
        nextSequence += 1
        entries.append(Entry(publish: publish, returnKey: returnKey))
        outstanding += 1
        if returnKey != nil {
            mandatory.append(sequence)
            if mandatory.count >= mandatoryCompactionAt { compactMandatory() }
        }
        if entries.count >= nextSweepSize { sweepStragglers() }
        return sequence
    }

    /// Settles on basic.ack (`nacked == false`) or basic.nack; returns the publishes with their results.
    mutating func settle(deliveryTag: UInt64, multiple: Bool, nacked: Bool) -> Settled {
        var settled: Settled = []
        func finish(_ sequence: UInt64, _ entry: Entry) {
            if nacked {
                settled.append((entry.publish, .failure(AMQPError(
                    code: .nacked, message: "broker nacked publish \(sequence); it was not stored"))))
            } else if let returned = entry.returned {
                settled.append((entry.publish, .failure(returned)))
            } else {
                settled.append((entry.publish, .success(())))
            }
        }
        if multiple {
            if !stragglers.isEmpty {
                for sequence in stragglers.keys.sorted() where sequence <= deliveryTag {
                    if let entry = remove(sequence) { finish(sequence, entry) }
                }
            }
            var sequence = lowest
            while sequence <= deliveryTag && sequence < nextSequence {
                if let entry = remove(sequence) { finish(sequence, entry) }
                sequence += 1
            }
        } else if let entry = remove(deliveryTag) {
            finish(deliveryTag, entry)
        }
        compact()
        return settled
    }

    /// Fails every publish written before `deadline` (its confirm is overdue: treated as not
    /// stored, so the caller's retry path runs); returns them.
    mutating func expire(writtenBefore deadline: ContinuousClock.Instant, error: AMQPError) -> Settled {
        var expired: Settled = []
        while let mark = marks.first, mark.at <= deadline {
            marks.removeFirst()
            if !stragglers.isEmpty {
                for sequence in stragglers.keys.sorted() where sequence < mark.sequence {
                    if let entry = remove(sequence) { expired.append((entry.publish, .failure(error))) }
                }
            }
            var sequence = lowest
            while sequence < mark.sequence && sequence < nextSequence {
                if let entry = remove(sequence) { expired.append((entry.publish, .failure(error))) }
                sequence += 1
            }
            compact()
        }
        return expired
    }

    /// Notes the time for the publishes written since the last mark (see `marks`).
    mutating func mark(now: ContinuousClock.Instant) {
        guard outstanding > 0, nextSequence > (marks.last?.sequence ?? 0) else { return }
        if let last = marks.last, now - last.at < Self.markInterval { return }
        marks.append((now, nextSequence))
    }

    /// Every outstanding publish starts its age again (the broker could not confirm while it
    /// had blocked the connection).
    mutating func restartAges(now: ContinuousClock.Instant) {
        guard let last = marks.last else { return }
        marks = [(now, last.sequence)]
    }

    /// Marks the publish a basic.return belongs to; false when none matches.
    mutating func markReturned(_ key: ReturnKey, replyCode: UInt16, replyText: String) -> Bool {
        var loose: UInt64?
        var exact: UInt64?
        for sequence in mandatory {
            guard let entry = entry(sequence), entry.returned == nil, let candidate = entry.returnKey,
                  candidate.exchange == key.exchange, candidate.routingKey == key.routingKey,
                  candidate.bodyCount == key.bodyCount
            else { continue }
            if candidate.properties == key.properties {
                exact = sequence
                break
            }
            if loose == nil { loose = sequence }
        }
        guard let sequence = exact ?? loose else { return false }
        let error = AMQPError(
            code: .unroutable, status: Int32(replyCode),
            message: "\(replyText): no queue bound to exchange '\(key.exchange)' with routing key '\(key.routingKey)'")
        if sequence < base {
            stragglers[sequence]?.returned = error
        } else {
            entries[Int(sequence - base)]?.returned = error
        }
        return true
    }

    /// Fails everything outstanding and starts a new channel incarnation (sequence 1).
    mutating func reset(failingWith error: AMQPError) -> Settled {
        var failed: Settled = stragglers.keys.sorted().compactMap { stragglers[$0].map { ($0.publish, .failure(error)) } }
        failed += entries.compactMap { $0.map { ($0.publish, Result<Void, AMQPError>.failure(error)) } }
        self = PublishConfirms()
        return failed
    }

    /// Moves `lowest` past settled slots, drops the settled prefix once it is most of the array,
    /// and forgets marks that no outstanding publish is older than.
    private mutating func compact() {
        while lowest < nextSequence && index(of: lowest).map({ entries[$0] == nil }) ?? false { lowest += 1 }
        let settledPrefix = Int(lowest - base)
        if settledPrefix >= 64, settledPrefix * 2 >= entries.count {
            entries.removeFirst(settledPrefix)
            base = lowest
        }
        let settledMandatory = mandatory.prefix { entry($0) == nil }.count
        if settledMandatory > 0 { mandatory.removeFirst(settledMandatory) }
        let oldestOutstanding = stragglers.isEmpty ? lowest : min(lowest, stragglers.keys.min() ?? lowest)
        let stale = marks.prefix { $0.sequence <= oldestOutstanding }.count
        if stale > 0 { marks.removeFirst(stale) }
    }

    /// `entries` reached `nextSweepSize` slots: when few of its older half are outstanding, they
    /// become stragglers and the half is dropped. Runs once per doubling, so O(1) a publish.
    private mutating func sweepStragglers() {
        let half = entries.count / 2
        var outstandingInHalf = 0
        for slot in 0..<half where entries[slot] != nil { outstandingInHalf += 1 }
        if outstandingInHalf * 8 <= half {
            for slot in 0..<half {
                if let entry = entries[slot] { stragglers[base + UInt64(slot)] = entry }
            }
            entries.removeFirst(half)
            base += UInt64(half)
            lowest = max(lowest, base)
            compact()
        }
        nextSweepSize = max(Self.sweepSize, entries.count * 2)
    }

    /// Drops settled sequence numbers from `mandatory` (one stuck at its front would keep the rest).
    private mutating func compactMandatory() {
        var kept = mandatory
        kept.removeAll { entry($0) == nil }
        mandatory = kept
        mandatoryCompactionAt = max(Self.sweepSize, mandatory.count * 2)
    }
}
