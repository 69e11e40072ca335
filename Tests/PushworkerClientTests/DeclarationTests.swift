import AMQP
import Testing
import Worker
@testable import PushworkerClient

/// The client declares what the worker declares, argument for argument: any difference is a 406
/// from the broker for whichever connects second.
@Suite struct DeclarationTests {
    @Test(arguments: ["push.results", "shop.results"], QueueType.allCases)
    func resultsTopologyIsTheWorkers(exchange: String, type: QueueType) throws {
        #expect(ResultsTopology.declarations(resultsExchange: exchange, queueType: type)
                == WorkerConfiguration.resultsTopology(resultsExchange: exchange, queueType: type))
        var worker = WorkerConfiguration(amqp: AMQPConfiguration(url: "amqp://127.0.0.1/"), redis: try .init(url: "redis://127.0.0.1"), apps: [:])
        worker.resultsExchange = exchange
        worker.queueType = type
        for declaration in ResultsTopology.declarations(resultsExchange: exchange, queueType: type) {
            #expect(worker.topology.contains(declaration))
        }
        #expect(ResultsTopology.unroutedEventsLimit == Int64(WorkerConfiguration.unroutedEventsLimit))
    }

    @Test func jobQueueIsDeclaredAsTheWorkerDoes() throws {
        var worker = WorkerConfiguration(amqp: AMQPConfiguration(url: "amqp://127.0.0.1/"), redis: try .init(url: "redis://127.0.0.1"), apps: [:])
        worker.jobQueue = "shop.jobs"
        #expect(worker.topology.contains(ResultsTopology.jobQueue("shop.jobs", type: .classic)))
        #expect(ResultsTopology.unroutedQueue(resultsExchange: worker.resultsExchange) == worker.unroutedEventsExchange)
    }

    /// A quorum job queue's arguments are the workers': the client declares nothing of it.
    @Test func quorumJobQueueIsOnlyCheckedFor() throws {
        var worker = WorkerConfiguration(amqp: AMQPConfiguration(url: "amqp://127.0.0.1/"), redis: try .init(url: "redis://127.0.0.1"), apps: [:])
        worker.queueType = .quorum
        #expect(ResultsTopology.jobQueue(worker.jobQueue, type: .quorum) == .existingQueue(name: worker.jobQueue))
        #expect(!worker.topology.contains(ResultsTopology.jobQueue(worker.jobQueue, type: .classic)))
    }
}
