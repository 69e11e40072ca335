import Foundation
import Gateway
import Testing
import WorkerConfigurationFile
import GatewayCore

/// The relay's limits through the running gateway over HTTP on 127.0.0.1, against the real
/// broker. The gateway's clock is frozen, so no bucket refills during a test: what is taken and
/// refused follows from the counts alone.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct RelayLimitTests {
    /// A flood from one address: exactly the burst is relayed and queued, the rest is 429 with
    /// Retry-After and a body that names the limit (before the limits, all 30 were queued). With
    /// no proxy trusted, the X-Forwarded-For it makes up changes nothing.
    @Test func aFloodFromOneAddressGetsTheBurstAndThen429() async throws {
        try await GatewayFixture.with(configure: { settings in
            settings.relayLimits.perAddress = .init(requestsPerSecond: 1, burst: 5)
            settings.trustedProxies = []
        }) { gateway in
            var answers = [LoopbackHTTP.Answer]()
            for index in 0..<30 { answers.append(try await gateway.relay(headers: [("X-Forwarded-For", "203.0.113.\(index)")])) }
            let burstRelayed = answers.prefix(5).allSatisfy { $0.status == 201 }
            #expect(burstRelayed, "\(answers.prefix(5))")
            let refused = answers.dropFirst(5)
            let restRefused = refused.allSatisfy { $0.status == 429 }
            #expect(restRefused, "\(refused.filter { $0.status != 429 })")
            let retryAfterOneSecond = refused.allSatisfy { $0.header("Retry-After") == "1" }
            #expect(retryAfterOneSecond)
            #expect(refused.first?.body.contains("127.0.0.1 is over the relay's limit per client address (1 a second, bursts of 5)") == true,
                    "\(refused.first?.body ?? "")")
            #expect(try await gateway.queuedJobs() == 5)
            let counts = try await gateway.counts()
            #expect(counts["relay_accepted"] == 5 && counts["relay_limited_by_address"] == 25 && counts["relay_limited_by_app"] == 0, "\(counts)")
        }
    }

    /// Many addresses (a trusted proxy's X-Forwarded-For) together meet the app's cap; each
    /// address has its own bucket, an IPv6 /64 one between them, and a post the app refused is
    /// not charged to its address.
    @Test func manyAddressesTogetherMeetTheAppsCap() async throws {
        try await GatewayFixture.with(configure: { settings in
            settings.relayLimits.perAddress = .init(requestsPerSecond: 1, burst: 3)
            settings.relayLimits.perApp = .init(requestsPerSecond: 1, burst: 8)
        }) { gateway in
            let plan: [(client: String, expected: [Int])] = [
                ("2001:db8:1:2::1", [201, 201]),
                ("2001:db8:1:2::ffff", [201, 429]),          // the same /64: its third post, then over
                ("203.0.113.1", [201, 201, 201, 429]),       // app tokens 4–6, then over its address
                ("203.0.113.2", [201, 201, 429, 429]),       // app tokens 7–8, then over the app
                ("198.51.100.9", [429]),
            ]
            var bodies = [String]()
            for (client, expected) in plan {
                var statuses = [Int]()
                for _ in expected {
                    let answer = try await gateway.relay(headers: [("X-Forwarded-For", "192.0.2.66, \(client)")])
                    statuses.append(answer.status)
                    bodies.append(answer.body)
                }
                #expect(statuses == expected, "\(client)")
            }
            #expect(bodies.last?.contains("the relay's app default is over its limit (1 a second, bursts of 8)") == true, "\(bodies.last ?? "")")
            let prefix64Limited = bodies.contains { $0.contains("2001:db8:1:2::/64 is over the relay's limit per client address") }
            #expect(prefix64Limited)
            #expect(try await gateway.queuedJobs() == 8)
            let counts = try await gateway.counts()
            #expect(counts["relay_accepted"] == 8 && counts["relay_limited_by_address"] == 2 && counts["relay_limited_by_app"] == 3, "\(counts)")
        }
    }

    /// A reload (`Gateway.reload`, as SIGHUP's) keeps the buckets of limits and keys it did not
    /// change, so it hands out no fresh bursts; changed limits start afresh.
    @Test func aReloadKeepsTheBucketsOfWhatItDidNotChange() async throws {
        let secret = String(repeating: "s", count: 32)
        try await GatewayFixture.with(configure: { settings in
            settings.relayLimits.perAddress = .init(requestsPerSecond: 1, burst: 2)
            settings.apiKeys = [LoadedAPIKey(name: "backend", secret: secret, apps: nil, requestsPerSecond: 1, burst: 2)]
        }) { (gateway: GatewayFixture) async throws in
            #expect(try await gateway.relayStatuses(3) == [201, 201, 429])
            #expect(try await gateway.jobStatuses(3, key: secret) == [202, 202, 429])
            gateway.gateway.reload(gateway.settings)
            #expect(try await gateway.relayStatuses(1) == [429])
            #expect(try await gateway.jobStatuses(1, key: secret) == [429])
            var changed = gateway.settings
            changed.relayLimits.perAddress = .init(requestsPerSecond: 1, burst: 3)
            changed.apiKeys = [LoadedAPIKey(name: "backend", secret: secret, apps: nil, requestsPerSecond: 2, burst: 2)]
            gateway.gateway.reload(changed)
            #expect(try await gateway.relayStatuses(4) == [201, 201, 201, 429])
            #expect(try await gateway.jobStatuses(1, key: secret) == [202])
            #expect(try await gateway.queuedJobs() == 2 + 2 + 3 + 1)
        }
    }
}
