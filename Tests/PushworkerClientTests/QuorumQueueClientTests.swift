import AMQP
import Testing
import Worker
@testable import PushworkerClient

/// Against the real RabbitMQ: a client publishing to quorum job queues that a worker declared.
@Suite(.serialized) struct QuorumQueueClientTests {
    @Test func publishesToTheWorkersQuorumQueueAndAClassicDeclarationIsRefusedClearly() async throws {
        var worker = WorkerConfiguration(amqp: AMQPConfiguration(url: ClientBrokerTests.url), redis: try .init(url: "redis://127.0.0.1"), apps: [:])
        worker.queueType = .quorum
        worker.jobQueue = ClientBrokerTests.uniqueName("quorum-jobs")
        worker.deadQueue = worker.jobQueue + ".dead"
        // A results exchange of its own: its .unrouted queue is a quorum queue too.
        worker.resultsExchange = ClientBrokerTests.uniqueName("quorum-results")
        let inspector = try await ClientBrokerTests.inspector()
        try await inspector.declare(worker.topology)

        let client = PushworkerClient(configuration: .init(amqpURL: ClientBrokerTests.url, jobQueue: worker.jobQueue,
                                                           connectionName: ClientBrokerTests.uniqueName("connection"), queueType: .quorum),
                                      logger: ClientBrokerTests.logger)
        try await client.publish(jobJSON: Array(#"{"id":"q-1","tokens":["t"],"payload":{}}"#.utf8), id: "q-1")
        #expect(try await inspector.messageCount(queue: worker.jobQueue) == 1)
        await client.shutdown()

        // The default, classic: its declaration of the quorum queue is refused, and the error says why.
        let classic = ClientBrokerTests.client(jobQueue: worker.jobQueue)
        do {
            try await classic.publish(jobJSON: Array(#"{"id":"q-2","tokens":["t"],"payload":{}}"#.utf8), id: "q-2", timeout: .seconds(3))
            Issue.record("a classic declaration of a quorum queue was accepted")
        } catch {
            #expect(error.description.contains("inequivalent arg") && error.description.contains("--queue-type"), "\(error)")
        }
        await classic.shutdown()
        #expect(try await inspector.messageCount(queue: worker.jobQueue) == 1)
        for queue in [worker.jobQueue, worker.bulkQueue, worker.delayQueue, worker.deadQueue, worker.unroutedEventsExchange] {
            try await inspector.deleteQueue(queue)
        }
        try await inspector.deleteExchange(worker.resultsExchange)
        try await inspector.deleteExchange(worker.unroutedEventsExchange)
        await inspector.shutdown()
    }
}
