import Foundation
import Sandbox
import Testing
import WebPush
@testable import Worker

/// A push service that offers only HTTP/1.1, reached through the whole pipeline: jobs from
/// RabbitMQ, a worker with defaults for everything but the test service's address, events back.
@Suite(.serialized, .timeLimit(.minutes(4)))
struct WebPushHTTP1EndToEndTests {
    /// Twenty subscriptions in two jobs: each message arrives once over HTTP/1.1 and decrypts to
    /// the job's payload, each job completes with its devices sent, and nothing is dead-lettered
    /// or failed. The switch from HTTP/2 costs no attempt: every job completes in its first round.
    @Test func anHTTP1OnlyServiceGetsEveryMessageOnce() async throws {
        try await WebPushTrustTests.withWorker(sandboxOffersHTTP2: false, apps: WebPushTrustTests.sandboxApp) { world in
            let fixture = world.fixture, sandbox = world.sandbox
            let subscriptions = try sandbox.subscribe(count: 20)
            for (job, part) in [subscriptions[..<10], subscriptions[10...]].enumerated() {
                let tokens = part.map { "\"\($0.compact)\"" }.joined(separator: ",")
                try await fixture.publish(#"{"id":"h1-\#(job)","app":"web","tokens":[\#(tokens)],"payload":{"job":\#(job)}}"#)
            }
            let events = try await fixture.events(timeout: .seconds(90)) { events in
                events.filter { $0.routingKey == "job.completed" }.count == 2
            }
            let completed = events.filter { $0.routingKey == "job.completed" }
            let sentPerJob = completed.map { $0.int("sent") }
            #expect(sentPerJob == [10, 10])
            let allFirstAttempt = completed.allSatisfy { $0.int("attempt") == 1 }
            #expect(allFirstAttempt, "the switch to HTTP/1.1 used no attempt")
            let anyFailedOrInvalid = events.contains { $0.routingKey == "delivery.failed" || $0.routingKey == "token.invalid" }
            #expect(!anyFailedOrInvalid)
            let received = sandbox.received()
            #expect(received.count == 20, "each message once")
            let allAcceptedOverHTTP1 = received.allSatisfy { $0.status == 201 && $0.httpVersion == "HTTP/1.1" }
            #expect(allAcceptedOverHTTP1)
            #expect(Set(received.map(\.subscriptionID)) == Set(subscriptions.map(\.id)))
            for message in received {
                let job = subscriptions[..<10].contains { $0.id == message.subscriptionID } ? 0 : 1
                #expect(String(decoding: message.plaintext, as: UTF8.self) == #"{"job":\#(job)}"#)
            }
            #expect(try await fixture.control.messageCount(queue: fixture.deadQueue) == 0)
        }
    }
}
