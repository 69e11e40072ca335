import AMQP
import Operations
import PushCore
import Testing

@Suite struct QueueSurveyBrokerTests {
    @Test func theRosterNamesTheQueuesAsTheWorkerDoes() {
        let roster = QueueRoster(jobQueue: "shop.jobs", retryDelays: [.seconds(1), .seconds(120)])
        #expect(roster.entries.map(\.name) == [
            "shop.jobs", "shop.jobs.bulk", "shop.jobs.retry.1s", "shop.jobs.retry.2m",
            "shop.jobs.bulk.retry.1s", "shop.jobs.bulk.retry.2m", "shop.jobs.delay", "shop.jobs.dead",
        ])
        #expect(roster.entries.filter(\.optional).map(\.name) == ["shop.jobs.delay"])
    }

    /// Depths and consumers of the queues that exist; the others are rows marked missing, and the
    /// survey goes on past them.
    @Test func countsWhatExistsAndShowsWhatIsMissing() async throws {
        let jobQueue = Services.uniqueName("survey")
        let roster = QueueRoster(jobQueue: jobQueue, retryDelays: [.seconds(5)])
        let dead = jobQueue + ".dead"
        try await Services.withQueues([jobQueue, dead]) { amqp in
            for index in 0..<3 {
                try await amqp.publish(exchange: "", routingKey: dead, body: Array("\(index)".utf8), properties: AMQPProperties(), mandatory: true)
            }
            amqp.consume(queue: jobQueue, prefetch: 1) { _ in }
            try await waitUntil("the consumer is counted") { try await amqp.consumerCount(queue: jobQueue) == 1 }
            let rows = await QueueSurvey.run(roster, amqp: amqp)
            #expect(rows.map(\.entry.name) == roster.entries.map(\.name))
            let states = Dictionary(uniqueKeysWithValues: rows.map { ($0.entry.name, $0.state) })
            #expect(states[jobQueue] == .present(messages: 0, consumers: 1))
            #expect(states[dead] == .present(messages: 3, consumers: 0))
            #expect(states[jobQueue + ".bulk"] == .missing)
            #expect(states[jobQueue + ".retry.5s"] == .missing)
            #expect(states[jobQueue + ".delay"] == .missing)

            // The JSON says the same, and that unacked counts are not known.
            guard case .object(let document) = try JSONValue.parse(Array(QueueReport.json(rows).utf8)),
                  case .array(let queues)? = document["queues"] else { throw TestFailure("not a queues document") }
            #expect(document["unacked"] == .null)
            #expect(queues.count == rows.count)
            #expect(queues.last == .object(["name": .string(dead), "role": .string("dead"), "exists": .bool(true), "ready": .int(3),
                                            "consumers": .int(0), "optional": .bool(false)]))
            #expect(QueueReport.text(rows).contains("not available") || QueueReport.text(rows).contains("not counted"))
            amqp.stopConsuming()
        }
    }
}

/// Polls `condition` until it holds (a bound on a stuck test, not a measure of speed).
func waitUntil(_ what: String, timeout: Duration = .seconds(30), _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw TestFailure("timed out waiting until \(what)") }
        try await Task.sleep(for: .milliseconds(20))
    }
}
