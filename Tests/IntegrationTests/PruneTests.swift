import Foundation
import PushCore
import Redis
import Sandbox
import Testing
import Worker
import WorkerConfigurationFile

/// An app's `prune_invalid_tokens`: invalid tokens leave the Redis groups they came from, through
/// chunk and retry jobs too, and the `token.invalid` event names those groups.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct PruneTests {
    static let dead = PipelineFixture.token(95_001), bad = PipelineFixture.token(95_002), explicit = PipelineFixture.token(95_003)
    static let flaky = PipelineFixture.token(95_004)
    static let rules = [
        SandboxRule(token: dead, status: 410, reason: "Unregistered"),
        SandboxRule(token: bad, status: 400, reason: "BadDeviceToken"),
        SandboxRule(token: explicit, status: 410, reason: "Unregistered"),
        // The first answer for this one is retryable: its retry job must still know the groups.
        SandboxRule(token: flaky, status: 503, reason: "ServiceUnavailable", times: 1),
    ]

    func members(_ fixture: PipelineFixture, _ group: String) async throws -> Set<String> {
        guard case let .array(items) = try await fixture.redis.command(["SMEMBERS", "\(fixture.groupPrefix)default:\(group)"]) else { return [] }
        return Set(items.compactMap(\.text))
    }

    /// Two groups share an invalid token, one holds another, and an invalid token given in
    /// `tokens` is in no group. The chunk size of 2 splits the fan-out into chunk jobs.
    @Test(arguments: [1000, 2])
    func invalidTokensLeaveTheirGroups(chunkSize: Int) async throws {
        try await PipelineFixture.with(sandbox: { $0.rules = Self.rules }) { fixture in
            var configuration = try fixture.workerConfiguration(chunkSize: chunkSize)
            configuration[apns: "default"]?.pruneInvalidTokens = true
            try fixture.startWorker(configuration)
            let good = (0..<3).map { PipelineFixture.token(95_100 + $0) }
            try await fixture.addToGroup("news", [good[0], Self.dead, Self.flaky])
            try await fixture.addToGroup("sports", [good[1], Self.dead, Self.bad, good[2]])
            try await fixture.publish(#"{"id":"prune","tokens":["\#(Self.explicit)"],"groups":["news","sports"],"payload":{"aps":{"alert":"p"}}}"#)

            let events = try await fixture.events(timeout: .seconds(30)) { events in
                events.filter { $0.routingKey == "token.invalid" }.count >= 3
                    && fixture.sandbox.received().contains { $0.token == Self.flaky && $0.status == 200 }
            }
            var removed: [String: [String]] = [:]
            for event in events where event.routingKey == "token.invalid" {
                guard case let .array(groups)? = event.fields["removed_from_groups"] else {
                    removed[event.string("token") ?? "", default: []] += []
                    continue
                }
                removed[event.string("token") ?? "", default: []] += groups.compactMap { if case let .string(name) = $0 { name } else { nil } }
            }
            #expect(Set(removed[Self.dead] ?? []) == ["news", "sports"])
            #expect(removed[Self.bad] == ["sports"])
            #expect(removed[Self.explicit] == [], "a token given in tokens and in no group is removed from none")
            #expect(try await members(fixture, "news") == [good[0], Self.flaky], "the retried device stays")
            #expect(try await members(fixture, "sports") == [good[1], good[2]])
        }
    }

    /// Without the option nothing is removed.
    @Test func withoutTheOptionGroupsStayAsTheyAre() async throws {
        try await PipelineFixture.with(sandbox: { $0.rules = Self.rules }) { fixture in
            try fixture.startWorker(fixture.workerConfiguration())
            try await fixture.addToGroup("news", [Self.dead, PipelineFixture.token(95_200)])
            try await fixture.publish(#"{"id":"keep","groups":["news"],"payload":{"aps":{"alert":"k"}}}"#)
            let events = try await fixture.events { $0.contains { $0.routingKey == "token.invalid" } }
            let removedFromGroups = events.first { $0.routingKey == "token.invalid" }?.fields["removed_from_groups"]
            #expect(removedFromGroups == nil)
            #expect(try await members(fixture, "news").count == 2)
        }
    }
}
