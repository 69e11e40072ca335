import Foundation
import Sandbox
import Testing
import WebPush
@testable import Worker

/// A push service's outage is not its devices' failure, once it has delivered for the app; a
/// service that never delivered gets no such credit.
@Suite(.serialized, .timeLimit(.minutes(4)))
struct WebPushOutageTests {
    /// The sandbox's push service delivers one message, then answers 503 to everything for longer
    /// than the ladder (the fixture's: two delays, three tries): its ten devices wait without using
    /// attempts and are all delivered once it is back, with no delivery.failed. Before, each ended
    /// in delivery.failed after its third 503. A subscription on a port where nothing listens (never
    /// delivered) still fails along the ladder, so a dead endpoint is not held forever.
    @Test func aServiceThatDeliveredIsWaitedOutAndADeadOneIsNot() async throws {
        try await WebPushTrustTests.withWorker(apps: WebPushTrustTests.sandboxApp) { world in
            let fixture = world.fixture, sandbox = world.sandbox
            let subscriptions = try sandbox.subscribe(count: 11)
            try await fixture.publish(#"{"id":"first","app":"web","tokens":["\#(subscriptions[0].compact)"],"payload":{"n":0}}"#)
            try await waitUntil("the service delivers once") { sandbox.received().contains { $0.status == 201 } }

            sandbox.setRules([WebPushSandboxRule(status: 503, reason: "ServiceUnavailable")])
            let closed = try CountingListener()
            let deadPort = closed.port
            closed.stop()
            let dead = WebPushTrustTests.moved(subscriptions[0], to: "https://127.0.0.1:\(deadPort)/gone")
            let tokens = subscriptions[1...].map { "\"\($0.compact)\"" }.joined(separator: ",")
            try await fixture.publish(#"{"id":"outage","app":"web","tokens":[\#(tokens)],"payload":{"n":1}}"#)
            try await fixture.publish(#"{"id":"dead","app":"web","tokens":["\#(dead)"],"payload":{"n":2}}"#)
            // Observed progress: every device of the outage job refused more often than the ladder allows tries.
            let tries = try fixture.workerConfiguration().retry.maxAttempts
            try await waitUntil("each device is refused more than \(tries) times", timeout: .seconds(120)) {
                let refused = sandbox.received().filter { $0.status == 503 }
                return Set(refused.map(\.subscriptionID)).count == 10
                    && Dictionary(grouping: refused, by: \.subscriptionID).values.allSatisfy { $0.count > tries }
            }
            sandbox.setRules([])
            let events = try await fixture.events { events in
                events.contains { $0.routingKey == "delivery.failed" } && Set(sandbox.received().filter { $0.status == 201 }.map(\.subscriptionID)).count == 11
            }
            let failed = events.filter { $0.routingKey == "delivery.failed" }
            let failedTokens = failed.compactMap { $0.string("token") }
            #expect(failedTokens == [dead], "only the never-delivering endpoint fails")
            let delivered = sandbox.received().filter { $0.status == 201 }
            #expect(delivered.count == 11, "each device once")
        }
    }
}
