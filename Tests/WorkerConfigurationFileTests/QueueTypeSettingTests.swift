import AMQP
import Testing
import Worker
@testable import WorkerConfigurationFile

/// `worker.queue_type` (`--queue-type`): read from the file, overridden by the flag, and the
/// settings quorum queues cannot work with refused by name.
@Suite struct QueueTypeSettingTests {
    func load(_ worker: String, overrides: WorkerSettings = WorkerSettings()) throws -> WorkerConfiguration {
        let material = try TestMaterial()
        defer { material.remove() }
        let text = "worker:\n\(worker)\napps:\n" + ConfigurationFileTests.tokenApp(keyFile: try material.tokenKey())
        let file = try ConfigurationFileReader.parse(text, path: "pushworker.yaml")
        return try ConfigurationLoader.load(file, overrides: overrides, environment: [:]).worker
    }

    @Test func readFromTheFileAndOverriddenByTheFlag() throws {
        #expect(try load("  chunk_size: 1000").queueType == .classic)
        #expect(try load("  queue_type: quorum").queueType == .quorum)
        var flags = WorkerSettings()
        flags.queueType = .classic
        #expect(try load("  queue_type: quorum", overrides: flags).queueType == .classic)
    }

    @Test func anUnknownTypeNamesTheChoices() {
        #expect {
            try load("  queue_type: mirrored")
        } throws: { error in
            let text = "\(error)"
            return text.contains("worker.queue_type") && text.contains("classic, quorum")
        }
    }

    /// A retry is held unacked for its whole delay with quorum queues: none may near the broker's
    /// consumer_timeout; and the worker must reject a job before the broker's delivery limit does.
    @Test func quorumRefusesLongDelaysAndRedeliveriesAtTheBrokersLimit() throws {
        #expect(try load("  queue_type: quorum\n  retry_delays: [1s, 25m]").retry.delays.last == .seconds(25 * 60))
        #expect(try load("  retry_delays: [1s, 2h]").retry.delays.last == .seconds(7200))
        #expect {
            try load("  queue_type: quorum\n  retry_delays: [1s, 2h]")
        } throws: { error in
            let text = "\(error)"
            return text.contains("worker.retry_delays") && text.contains("consumer_timeout")
        }
        #expect {
            try load("  queue_type: quorum\n  max_redeliveries: 20")
        } throws: { error in
            let text = "\(error)"
            return text.contains("worker.max_redeliveries") && text.contains("x-delivery-limit")
        }
    }
}
