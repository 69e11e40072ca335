import AMQP

/// The dead queue `<job queue>.dead` seen by an operator. Messages are taken with basic.get
/// without ack (`AMQPClient.hold`), so nothing is consumed by looking: what is not acked goes
/// back to its place when the admin channel closes at the end (`releaseHeld`), in its order, and
/// also if the command is killed (the broker requeues what a closed connection held). A quorum
/// queue does not count such a return as a failed delivery.
///
/// A replay acks a dead message only after its copy was confirmed by the job queue (published
/// `mandatory`, so a missing job queue is an error, not a silent drop). Killed in between, the job
/// is in both queues (sent twice), never in neither.
public struct DeadQueue: Sendable {
    public let amqp: AMQPClient
    public let name: String
    /// Where replayed jobs go.
    public let jobQueue: String
    /// Dead messages taken before their copies' confirms are awaited together.
    public var window = 100

    public static func name(jobQueue: String) -> String { jobQueue + ".dead" }

    public init(amqp: AMQPClient, jobQueue: String) {
        self.amqp = amqp
        self.jobQueue = jobQueue
        self.name = Self.name(jobQueue: jobQueue)
    }

    /// The first `limit` dead jobs, oldest first, left in the queue; and how many there are.
    public func list(limit: Int) async throws(OperationError) -> (letters: [DeadLetter], ready: Int) {
        let ready = try await readyCount()
        var letters: [DeadLetter] = []
        do {
            while letters.count < limit, let held = try await amqp.hold(queue: name) {
                letters.append(DeadLetter(held.delivery))
            }
            try await amqp.releaseHeld()
        } catch {
            throw OperationError("reading \(name): \(error)")
        }
        return (letters, ready)
    }

    /// Replays or drops the selected jobs (with `dryRun`, only counts what a replay would move).
    public func settle(_ selection: DeadSelection, _ operation: DeadDecision.Operation, dryRun: Bool = false) async throws(OperationError) -> DeadOutcome {
        // Only what is there now: a job that a running worker rejects again comes back behind them.
        let budget = try await readyCount()
        var outcome = DeadOutcome()
        do {
            while outcome.scanned < budget, outcome.failure == nil {
                var taken: [(AMQPHeldMessage, DeadDecision)] = []
                while taken.count < window, outcome.scanned < budget, let held = try await amqp.hold(queue: name) {
                    outcome.scanned += 1
                    let letter = DeadLetter(held.delivery)
                    let decision = DeadDecision(letter, properties: held.delivery.properties, selection: selection, operation: operation)
                    if decision != .leave { outcome.matched += 1 }
                    if decision == .keepTruncated { outcome.truncated.append(letter) }
                    taken.append((held, decision))
                }
                if taken.isEmpty { break }
                if !dryRun { try await carryOut(taken, into: &outcome) } else {
                    outcome.moved += taken.count(where: { if case .replay = $0.1 { true } else { false } })
                }
            }
            try await amqp.releaseHeld()
        } catch {
            outcome.failure = "\(name): \(error)"
            try? await amqp.releaseHeld()
        }
        return outcome
    }

    /// Drops at once; replays publish every copy of the window first, then ack each original whose
    /// copy was confirmed. The first refused copy ends the run (the rest go back).
    private func carryOut(_ taken: [(AMQPHeldMessage, DeadDecision)], into outcome: inout DeadOutcome) async throws(AMQPError) {
        let (confirms, reporter) = AsyncStream.makeStream(of: (Int, Result<Void, AMQPError>).self)
        var published = 0
        for (index, (held, decision)) in taken.enumerated() {
            switch decision {
            case .drop:
                try await amqp.acknowledge(held)
                outcome.dropped += 1
            case .replay(let properties):
                // Published in the dead queue's order (the callback form queues at once).
                amqp.publish(exchange: "", routingKey: jobQueue, body: held.delivery.body, properties: properties, mandatory: true) { result in
                    reporter.yield((index, result))
                }
                published += 1
            case .leave, .keepTruncated:
                break
            }
        }
        var results: [Int: Result<Void, AMQPError>] = [:]
        // Each publish completes exactly once (confirm, return, nack or a lost connection).
        if published > 0 {
            for await (index, result) in confirms {
                results[index] = result
                if results.count == published { break }
            }
        }
        reporter.finish()
        for index in results.keys.sorted() {
            switch results[index] {
            case .success?:
                do {
                    try await amqp.acknowledge(taken[index].0)
                    outcome.moved += 1
                } catch {
                    outcome.copiedTwice += 1
                    outcome.failure = outcome.failure ?? "\(error)"
                }
            case .failure(let error)?:
                outcome.failure = outcome.failure ?? "the copy of \(DeadLetter(taken[index].0.delivery).name) was not taken by \(jobQueue): \(error)"
            case nil:
                break
            }
        }
    }

    /// Ready messages now (passive declare); a missing dead queue is an error naming it.
    private func readyCount() async throws(OperationError) -> Int {
        do { return try await amqp.messageCount(queue: name) } catch where error.status == 404 {
            throw OperationError("the dead queue \(name) does not exist (is --job-queue right? a worker declares it on start)")
        } catch {
            throw OperationError("\(name): \(error)")
        }
    }
}
