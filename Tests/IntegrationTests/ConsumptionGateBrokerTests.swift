import AMQP
import Foundation
import Logging
import Redis
import Testing
@testable import Worker

/// The consumption gate against the real RabbitMQ: whatever order retunes, pauses and resumes come
/// in from several threads, the broker's own count of consumers on the job queue agrees with the
/// gate (one while it consumes, none while it is paused).
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ConsumptionGateBrokerTests {
    @Test func racingRetunesPausesAndResumesLeaveTheBrokerAgreeingWithTheGate() async throws {
        let queue = "pushworker-test.gate.\(UUID().uuidString.prefix(8))"
        var logger = Logger(label: "gate-test")
        logger.logLevel = .critical
        let amqp = AMQPClient(configuration: AMQPConfiguration(url: PipelineFixture.amqpURL),
                              topology: [.queue(name: queue, durable: false), .queue(name: queue + ".bulk", durable: false)], logger: logger)
        amqp.start()
        try await amqp.waitUntilConnected(timeout: .seconds(10))
        var configuration = WorkerConfiguration(amqp: AMQPConfiguration(url: PipelineFixture.amqpURL),
                                                redis: try RedisConfiguration(url: PipelineFixture.redisURL), apps: [:])
        configuration.jobQueue = queue
        let gate = ConsumptionGate(amqp: amqp, status: WorkerStatus(), configuration: configuration,
                                   delayed: DelayedWork(), logger: logger)
        gate.open(delivering: { _ in })
        #expect(try await amqp.consumerCount(queue: queue) == 1)

        for round in 0..<30 {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for step in 0..<40 { gate.retune(prefetch: UInt16(10 + (step + round) % 5 * 10)) }
                }
                group.addTask {
                    for _ in 0..<40 { gate.pause(.memory); gate.resume(.memory) }
                }
                group.addTask {
                    for _ in 0..<20 { gate.pause(.redisConfiguration); gate.resume(.redisConfiguration) }
                }
                group.addTask {
                    // The last word of the round: paused on even rounds.
                    for _ in 0..<20 { gate.pause(.resultsUnpublishable); gate.resume(.resultsUnpublishable) }
                    if round % 2 == 0 { gate.pause(.resultsUnpublishable) }
                }
            }
            // Commands reach the AMQP thread in order, so the count answers after every change above.
            let expected = gate.isConsuming ? 1 : 0
            #expect(expected == (round % 2 == 0 ? 0 : 1))
            let consumers = try await amqp.consumerCount(queue: queue)
            #expect(consumers == expected, "round \(round): the broker sees \(consumers) consumers, the gate \(expected)")
            let bulkConsumers = try await amqp.consumerCount(queue: queue + ".bulk")
            #expect(bulkConsumers == expected, "round \(round): the bulk lane has \(bulkConsumers) consumers, the gate \(expected)")
            gate.resume(.resultsUnpublishable)
        }
        gate.close()
        #expect(try await amqp.consumerCount(queue: queue) == 0)
        try await amqp.deleteQueue(queue)
        try await amqp.deleteQueue(queue + ".bulk")
        await amqp.shutdown()
    }
}
