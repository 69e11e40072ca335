@testable import AMQP
import Testing

/// A client outlives its thread (a caller holds it after `shutdown()`, or never starts it): the
/// liveness probe must not count it as a loop stuck running. Before, a stopped client's loop read
/// as "running" from the moment it ended, and `/livez` answered 503 thirty seconds later.
@Suite struct ClientHeartbeatTests {
    @Test func aClientNotStartedOrShutDownIsNotRunning() async throws {
        let idle = AMQPClient(configuration: AMQPConfiguration(url: Broker.url), topology: [], logger: Broker.logger) { _ in }
        #expect(idle.heartbeat.running(at: .max) == nil)

        let client = try await Broker.connectedClient()
        await client.shutdown()
        #expect(client.heartbeat.running(at: .max) == nil)
    }
}
