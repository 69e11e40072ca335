/// Publisher-confirm bookkeeping for one incarnation of the publish channel.
///
/// The broker numbers publishes from 1 per channel and answers with basic.ack / basic.nack
/// (`multiple` covers every earlier sequence number). A basic.return carries no sequence number,
/// so it is matched to the oldest outstanding mandatory publish with the same exchange, routing
/// key and body size (publishes to the same destination route the same way), preferring one whose
/// properties match too; the ack that follows it then fails that publish as unroutable.
struct PublishConfirms {
    typealias Completion = @Sendable (Result<Void, AMQPError>) -> Void

    /// What a basic.return is compared against.
    struct ReturnKey: Equatable {
        var exchange: String
        var routingKey: String
        var bodyCount: Int
        var properties: AMQPProperties
    }

    private struct Entry {
        let completion: Completion
        let returnKey: ReturnKey?
        var returned: AMQPError?
    }

    /// Outstanding publishes by sequence number: `entries[i]` is sequence `base + i`, nil once
    /// settled. Sequence numbers are consecutive, so an array indexed from `base` finds them
    /// without hashing (a dictionary cost ~700 instructions per publish, `ops/count-instructions`).
    private var entries: [Entry?] = []
    private var base: UInt64 = 1
    /// Sequence numbers of mandatory publishes, oldest first (may contain settled ones).
    private var mandatory: [UInt64] = []
    private var lowest: UInt64 = 1
    private(set) var nextSequence: UInt64 = 1
    private(set) var outstanding = 0

    private func index(of sequence: UInt64) -> Int? {
        guard sequence >= base, sequence < nextSequence else { return nil }
        return Int(sequence - base)
    }

    private func entry(_ sequence: UInt64) -> Entry? {
        index(of: sequence).flatMap { entries[$0] }
    }

    private mutating func remove(_ sequence: UInt64) -> Entry? {
        guard let index = index(of: sequence), let entry = entries[index] else { return nil }
        entries[index] = nil
        outstanding -= 1
        return entry
    }

    /// Records a publish that was just written; returns its sequence number.
    @discardableResult
    mutating func record(completion: @escaping Completion, returnKey: ReturnKey?) -> UInt64 {
        let sequence = nextSequence
        nextSequence += 1
        entries.append(Entry(completion: completion, returnKey: returnKey))
        outstanding += 1
        if returnKey != nil { mandatory.append(sequence) }
        return sequence
    }

    /// Settles on basic.ack (`nacked == false`) or basic.nack; returns the completions to run.
    mutating func settle(deliveryTag: UInt64, multiple: Bool, nacked: Bool) -> [(Completion, Result<Void, AMQPError>)] {
        var settled: [(Completion, Result<Void, AMQPError>)] = []
        func finish(_ sequence: UInt64, _ entry: Entry) {
            if nacked {
                settled.append((entry.completion, .failure(AMQPError(
                    code: .nacked, message: "broker nacked publish \(sequence); it was not stored"))))
            } else if let returned = entry.returned {
                settled.append((entry.completion, .failure(returned)))
            } else {
                settled.append((entry.completion, .success(())))
            }
        }
        if multiple {
            var sequence = lowest
            while sequence <= deliveryTag && sequence < nextSequence {
                if let entry = remove(sequence) { finish(sequence, entry) }
                sequence += 1
            }
        } else if let entry = remove(deliveryTag) {
            finish(deliveryTag, entry)
        }
        while lowest < nextSequence && entry(lowest) == nil { lowest += 1 }
        // Settled entries before `lowest` are dropped once they are most of the array.
        let settledPrefix = Int(lowest - base)
        if settledPrefix >= 64, settledPrefix * 2 >= entries.count {
            entries.removeFirst(settledPrefix)
            base = lowest
        }
        let settledMandatory = mandatory.prefix { entry($0) == nil }.count
        if settledMandatory > 0 { mandatory.removeFirst(settledMandatory) }
        return settled
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
        entries[Int(sequence - base)]?.returned = AMQPError(
            code: .unroutable, status: Int32(replyCode),
            message: "\(replyText): no queue bound to exchange '\(key.exchange)' with routing key '\(key.routingKey)'")
        return true
    }

    /// Fails everything outstanding and starts a new channel incarnation (sequence 1).
    mutating func reset(failingWith error: AMQPError) -> [(Completion, Result<Void, AMQPError>)] {
        let failed = entries.compactMap { $0.map { ($0.completion, Result<Void, AMQPError>.failure(error)) } }
        self = PublishConfirms()
        return failed
    }
}
