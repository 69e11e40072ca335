import AMQP
import Operations
import PushCore
import Testing

/// `dead list`, `replay` and `drop` against the real RabbitMQ, on dead copies made by the worker's
/// own `DeadLetterCopy`.
@Suite struct DeadQueueBrokerTests {
    /// A job queue and its dead queue of their own, with `bodies` dead-lettered in order.
    private func withDeadQueue<Result>(_ letters: [(body: [UInt8], truncatedFrom: Int?)], declareJobQueue: Bool = true,
                                       _ body: (AMQPClient, DeadQueue) async throws -> Result) async throws -> Result {
        let jobQueue = Services.uniqueName("jobs")
        let deadQueue = DeadQueue.name(jobQueue: jobQueue)
        return try await Services.withQueues(declareJobQueue ? [jobQueue, deadQueue] : [deadQueue]) { amqp in
            for letter in letters {
                try await DeadCopies.publish(amqp, to: deadQueue, body: letter.body, truncatedFrom: letter.truncatedFrom)
            }
            return try await body(amqp, DeadQueue(amqp: amqp, jobQueue: jobQueue))
        }
    }

    private func ids(_ deliveries: [AMQPDelivery]) -> [String?] { deliveries.map { DeadLetter($0).id } }

    @Test func listShowsTheJobsInOrderAndConsumesNothing() async throws {
        try await withDeadQueue((1...5).map { (DeadCopies.job(id: "job-\($0)"), nil) }) { amqp, dead in
            let first = try await dead.list(limit: 3)
            #expect(first.ready == 5)
            #expect(first.letters.map(\.id) == ["job-1", "job-2", "job-3"])
            let lettersNameTheProblem = first.letters.allSatisfy {
                $0.app == "news" && $0.field == "payload.aps" && $0.error == "payload.aps: is required"
            }
            #expect(lettersNameTheProblem)
            #expect(try await amqp.messageCount(queue: dead.name) == 5)
            // Given back in place: a second look, and then a consumer, see the same order.
            #expect(try await dead.list(limit: 10).letters.map(\.id) == ["job-1", "job-2", "job-3", "job-4", "job-5"])
            #expect(ids(try await DeadCopies.drain(amqp, dead.name)) == ["job-1", "job-2", "job-3", "job-4", "job-5"])
        }
    }

    @Test func replayMovesTheConfirmedJobsAndLeavesACutOne() async throws {
        let cut = Array(DeadCopies.job(id: "big").prefix(40))
        try await withDeadQueue([(DeadCopies.job(id: "a", attempts: 3), nil), (cut, 5_000_000), (DeadCopies.job(id: "c"), nil)]) { amqp, dead in
            let outcome = try await dead.settle(.all, .replay)
            #expect(outcome.failure == nil)
            #expect(outcome.scanned == 3)
            #expect(outcome.matched == 3)
            #expect(outcome.moved == 2)
            #expect(outcome.truncated.map(\.truncatedFrom) == [5_000_000])
            let replayed = try await DeadCopies.drain(amqp, dead.jobQueue)
            #expect(replayed.map(\.body) == [DeadCopies.job(id: "a", attempts: 3), DeadCopies.job(id: "c")])
            for copy in replayed {
                // A fresh job: no dead-letter bookkeeping, the publisher's properties kept.
                let noBookkeepingHeaders = copy.properties.headers.keys.allSatisfy { !$0.hasPrefix("x-pushworker-") }
                #expect(noBookkeepingHeaders)
                #expect(copy.properties.contentType == "application/json")
                #expect(copy.properties.messageID?.hasPrefix("message-") == true)
            }
            let left = try await DeadCopies.drain(amqp, dead.name)
            #expect(left.map(\.body) == [cut])
        }
    }

    @Test func aDryRunMovesNothing() async throws {
        try await withDeadQueue([(DeadCopies.job(id: "a"), nil), (DeadCopies.job(id: "b"), nil), (Array("{".utf8), 70_000)]) { amqp, dead in
            let outcome = try await dead.settle(.all, .replay, dryRun: true)
            #expect(outcome.moved == 2)
            #expect(outcome.truncated.count == 1)
            #expect(try await amqp.messageCount(queue: dead.jobQueue) == 0)
            #expect(try await DeadCopies.drain(amqp, dead.name).map(\.body) == [DeadCopies.job(id: "a"), DeadCopies.job(id: "b"), Array("{".utf8)])
        }
    }

    @Test func replayByIDMovesThatJobAndKeepsTheOthersInOrder() async throws {
        try await withDeadQueue((1...4).map { (DeadCopies.job(id: "job-\($0)"), nil) }) { amqp, dead in
            let outcome = try await dead.settle(.ids(["job-3"]), .replay)
            #expect(outcome.matched == 1)
            #expect(outcome.moved == 1)
            #expect(ids(try await DeadCopies.drain(amqp, dead.jobQueue)) == ["job-3"])
            #expect(ids(try await DeadCopies.drain(amqp, dead.name)) == ["job-1", "job-2", "job-4"])
        }
    }

    /// Without a job queue the mandatory copies come back unroutable: nothing is acked, nothing lost.
    @Test func aCopyTheJobQueueDoesNotTakeLeavesEverythingInTheDeadQueue() async throws {
        try await withDeadQueue([(DeadCopies.job(id: "a"), nil), (DeadCopies.job(id: "b"), nil)], declareJobQueue: false) { amqp, dead in
            let outcome = try await dead.settle(.all, .replay)
            #expect(outcome.moved == 0)
            #expect(outcome.failure?.contains(dead.jobQueue) == true)
            #expect(ids(try await DeadCopies.drain(amqp, dead.name)) == ["a", "b"])
        }
    }

    @Test func dropRemovesTheSelectedJobs() async throws {
        try await withDeadQueue((1...3).map { (DeadCopies.job(id: "job-\($0)"), nil) }) { amqp, dead in
            let one = try await dead.settle(.ids(["job-2"]), .drop)
            #expect(one.dropped == 1)
            #expect(try await amqp.messageCount(queue: dead.name) == 2)
            let rest = try await dead.settle(.all, .drop)
            #expect(rest.dropped == 2)
            #expect(try await amqp.messageCount(queue: dead.name) == 0)
            #expect(try await amqp.messageCount(queue: dead.jobQueue) == 0)
        }
    }

    /// More dead jobs than one window: every window's confirms and acks, and the scan stops at the
    /// jobs that were there when it began.
    @Test func replayCrossesWindows() async throws {
        try await withDeadQueue((1...25).map { (DeadCopies.job(id: "job-\($0)"), nil) }) { amqp, dead in
            var small = dead
            small.window = 7
            let outcome = try await small.settle(.all, .replay)
            #expect(outcome.moved == 25)
            let allJobIDs = (1...25).map { "job-\($0)" }
            #expect(ids(try await DeadCopies.drain(amqp, dead.jobQueue)) == allJobIDs)
            #expect(try await amqp.messageCount(queue: dead.name) == 0)
        }
    }

    @Test func aMissingDeadQueueIsNamed() async throws {
        let amqp = try await Services.broker()
        let dead = DeadQueue(amqp: amqp, jobQueue: Services.uniqueName("absent"))
        let error = await #expect(throws: OperationError.self) { try await dead.list(limit: 1) }
        #expect(error?.description.contains(dead.name) == true)
        await amqp.shutdown()
    }
}
