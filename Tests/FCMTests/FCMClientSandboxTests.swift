import FCM
import FCMCore
import Foundation
import HTTP2
import PushCore
import PushTransport
import Sandbox
import Testing

/// FCMClient against the sandbox's FCM mode, end to end: the OAuth grant, messages:send over HTTP/2,
/// FCM's errors as the sandbox scripts them, and the access token's renewal.
@Suite struct FCMClientSandboxTests {
    @Test("a job is sent: the sandbox records the message as FCM would see it, and the name is the request id")
    func sent() async throws {
        try await withFCMSandbox { harness in
            let client = try harness.makeClient()
            let job = try fcmJob(fields: #""priority":10,"collapse_id":"score","expiration":"+600","#)
            let first = await client.send(job, to: "device-0000000000000001")
            let second = await client.send(job, to: "device-0000000000000002")
            await client.shutdown()
            #expect(first.outcome == .sent, "\(first)")
            #expect(second.outcome == .sent, "\(second)")
            #expect(first.requestID?.hasPrefix("projects/pushworker-sandbox/messages/") == true, "\(String(describing: first.requestID))")
            #expect(first.requestID != second.requestID)
            let received = harness.sandbox.received()
            #expect(received.map(\.token) == ["device-0000000000000001", "device-0000000000000002"])
            let acceptedWithJobFields = received.allSatisfy {
                $0.status == 200 && $0.priority == 10 && $0.collapseID == "score" && $0.topic == "pushworker-sandbox"
            }
            #expect(acceptedWithJobFields)
            let ttlFromExpiration = received.allSatisfy { ($0.expiration ?? 0) > 590 && ($0.expiration ?? 0) <= 600 }
            #expect(ttlFromExpiration, "ttl from the job's expiration")
            let parsedBody = try received.first.map { try JSONValue.parse($0.payload) }
            let body = try #require(parsedBody)
            guard case let .object(request) = body, case let .object(message)? = request["message"] else {
                Issue.record("not a message: \(body)")
                return
            }
            #expect(message["data"] == .object(["k": .string("v")]))
            #expect(message["notification"] == .object(["title": .string("Hi"), "body": .string("there")]))
            #expect(harness.sandbox.accessTokensIssued == 1, "one token shared by both requests")
            #expect(received.first?.providerToken == received.last?.providerToken)
        }
    }

    @Test("many devices at once share one access token fetch, and stay within the sandbox's stream limit")
    func concurrentSends() async throws {
        try await withFCMSandbox(sandbox: { $0.maxConcurrentStreams = 8 }) { harness in
            let client = try harness.makeClient()
            let job = try fcmJob()
            let outcomes = await withTaskGroup(of: DeliveryOutcome.self) { group in
                for index in 0..<60 {
                    group.addTask { await client.send(job, to: "device-\(100_000_000_000 + index)").outcome }
                }
                return await group.reduce(into: [DeliveryOutcome]()) { $0.append($1) }
            }
            await client.shutdown()
            #expect(outcomes.count == 60)
            let allSent = outcomes.allSatisfy { $0 == .sent }
            #expect(allSent, "\(outcomes.filter { $0 != .sent })")
            #expect(harness.sandbox.accessTokensIssued == 1, "one fetch for all 60")
            let statistics = harness.sandbox.statistics()
            #expect(statistics.accepted == 60)
            #expect(statistics.streamLimitViolations == 0)
            #expect(statistics.maxConcurrentStreamsSeen <= 8)
            #expect(Set(harness.sandbox.received().map(\.token)).count == 60)
        }
    }

    @Test("each scripted FCM error maps to its outcome and configuration fit")
    func scriptedErrors() async throws {
        try await withFCMSandbox({ $0.retryAfterSeconds = 90 }) { harness in
            harness.sandbox.setRules([
                SandboxRule(tokenPrefix: "gone-", status: 404, reason: "UNREGISTERED"),
                SandboxRule(tokenPrefix: "other-", status: 403, reason: "SENDER_ID_MISMATCH"),
                SandboxRule(tokenPrefix: "busy-", status: 429, reason: "QUOTA_EXCEEDED"),
                SandboxRule(tokenPrefix: "down-", status: 503, reason: "UNAVAILABLE"),
                SandboxRule(tokenPrefix: "oops-", status: 500, reason: "INTERNAL"),
                SandboxRule(tokenPrefix: "bad-", status: 400, reason: "INVALID_ARGUMENT"),
                SandboxRule(tokenPrefix: "apns-", status: 401, reason: "THIRD_PARTY_AUTH_ERROR"),
            ])
            let client = try harness.makeClient()
            let job = try fcmJob()
            func send(_ token: String) async -> PushResult { await client.send(job, to: token) }

            let gone = await send("gone-000000000000001")
            #expect(gone.status == 404)
            #expect(gone.outcome == .tokenInvalid(reason: "UNREGISTERED: Requested entity was not found."))
            #expect(client.configurationFit(of: gone, job: job) == .fits)

            let other = await send("other-00000000000001")
            #expect(other.outcome == .tokenInvalid(reason: "SENDER_ID_MISMATCH: SenderId mismatch"))
            #expect(client.configurationFit(of: other, job: job)
                == .mismatch(suspect: "wrong Firebase project? FCM answered SENDER_ID_MISMATCH", check: "the service account's project_id"))

            let busy = await send("busy-000000000000001")
            #expect(busy.status == 429)
            #expect(busy.reason == "QUOTA_EXCEEDED")
            #expect(busy.retryAfter == .seconds(90))
            if case .retryable = busy.outcome {} else { Issue.record("429 is retried: \(busy.outcome)") }
            #expect(client.counters.projectQuotaExceeded == 1)
            #expect(client.counters.throttleWindow != nil, "a project 429 throttles the client")

            let down = await send("down-000000000000001")
            #expect(down.retryAfter == .seconds(90))
            #expect(down.outcome == .retryable(reason: "UNAVAILABLE: The service is currently unavailable."))

            let oops = await send("oops-000000000000001")
            #expect(oops.outcome == .retryable(reason: "INTERNAL: Internal error encountered."))
            #expect(oops.retryAfter == nil)

            let bad = await send("bad-0000000000000001")
            #expect(bad.outcome == .tokenInvalid(reason: "INVALID_ARGUMENT: The registration token is not a valid FCM registration token"))

            let apns = await send("apns-000000000000001")
            if case .credentialsProblem = apns.outcome {} else { Issue.record("THIRD_PARTY_AUTH_ERROR is the project's credentials: \(apns.outcome)") }
            if case .misconfigured = client.configurationFit(of: apns, job: job) {} else { Issue.record("THIRD_PARTY_AUTH_ERROR is misconfigured") }

            #expect(client.counters.clientErrors == 4, "404, 403, 400 and 401 use up the project's quota")
            await client.shutdown()
        }
    }

    @Test("the sandbox checks the message like FCM: a data value that is not a string is the payload's fault")
    func sandboxValidation() async throws {
        try await withFCMSandbox { harness in
            let client = try harness.makeClient()
            // Built directly: the job parser would refuse it before FCM could.
            let job = PushJob(id: "raw", tokens: [], options: FCMJobOptions(), payload: Array(#"{"data":{"n":1}}"#.utf8))
            let refused = await client.send(job, to: "device-0000000000000001")
            #expect(refused.outcome == .permanentFailure(reason: "INVALID_ARGUMENT: Invalid value at 'message.data[n].value' (TYPE_STRING)"))
            let reserved = PushJob(id: "raw2", tokens: [], options: FCMJobOptions(), payload: Array(#"{"data":{"google.x":"1"}}"#.utf8))
            #expect(await client.send(reserved, to: "device-0000000000000001").outcome == .permanentFailure(reason: "INVALID_ARGUMENT: Invalid data payload key: google.x"))
            let badToken = await client.send(try fcmJob(), to: "device with spaces 0001")
            #expect(badToken.outcome == .tokenInvalid(reason: "INVALID_ARGUMENT: The registration token is not a valid FCM registration token"))
            await client.shutdown()
        }
    }

    @Test("a bearer the sandbox did not issue is refused with 401 and no FcmError detail")
    func forgedBearer() async throws {
        try await withFCMSandbox { harness in
            let raw = harness.makeRawClient()
            let body = Array(#"{"message":{"token":"device-0000000000000001","data":{"k":"v"}}}"#.utf8)
            let response = try await raw.send(HTTP2Request(method: "POST", path: harness.sendPath, headers: [
                HTTP2Header(name: "authorization", value: "Bearer ya29.forged-token"), HTTP2Header(name: "content-type", value: "application/json"),
            ], body: body))
            await raw.shutdown()
            #expect(response.status == 401)
            let text = String(decoding: response.body, as: UTF8.self)
            #expect(text.contains(#""status":"UNAUTHENTICATED""#), "\(text)")
            #expect(!text.contains("FcmError"), "\(text)")
            let answer = FCMAnswer(status: response.status, body: response.body, retryAfterHeader: nil, now: 0)
            if case .refreshCredentials = answer.outcome {} else { Issue.record("our token refused: refresh it, got \(answer.outcome)") }
            #expect(harness.sandbox.received().first?.status == 401)
        }
    }

    @Test("an access token the sandbox expired is replaced once and the device resent")
    func tokenRefresh() async throws {
        try await withFCMSandbox { harness in
            let client = try harness.makeClient()
            let job = try fcmJob()
            #expect(await client.send(job, to: "device-0000000000000001").outcome == .sent)
            harness.sandbox.expireAccessTokens()
            var results = [await client.send(job, to: "device-0000000000000002")]
            #expect(results[0].asksForNewCredentials, "\(results[0])")
            let resent = await client.renewCredentialsAndResend(&results) { indices in
                var again: [PushResult] = []
                for _ in indices { again.append(await client.send(job, to: "device-0000000000000002")) }
                return again
            }
            #expect(resent == 1)
            #expect(results[0].outcome == .sent, "\(results[0])")
            #expect(harness.sandbox.accessTokensIssued == 2)
            let tokens = harness.sandbox.received().compactMap(\.providerToken)
            #expect(Set(tokens).count == 2, "the resend carried the new token")
            await client.shutdown()
        }
    }

    /// Assertions an hour off, whichever clock is wrong: the token endpoint refuses the first as
    /// outside its timeframe, the client corrects by the answer's Date once, gets a token and sends.
    @Test("assertions an hour off get a token after one correction, and the device is sent", arguments: [
        (3600, 0),    // the endpoint's clock an hour ahead of this machine's
        (0, 3600),    // this machine's clock an hour ahead
        (-3600, 0),   // the endpoint's clock an hour behind
    ])
    func clockSkewCorrectedOnce(endpointAhead: Int, workerAhead: Int) async throws {
        try await withFCMSandbox({ $0.clockOffset = .seconds(endpointAhead) }) { harness in
            let client = try harness.makeClient(clock: .init(monotonic: { .now }, unixSeconds: { Int(Date().timeIntervalSince1970) + workerAhead }))
            let result = await client.send(try fcmJob(), to: "device-0000000000000001")
            await client.shutdown()
            #expect(result.outcome == .sent, "\(result)")
            #expect(harness.sandbox.accessTokenGrantsRefused == 1, "refused once")
            #expect(harness.sandbox.accessTokensIssued == 1, "then granted")
            #expect(harness.sandbox.received().map(\.status) == [200])
        }
    }

    /// A correction that does not help (here the clock jumps another hour between the refusal and
    /// the retry) is not tried again: the second refusal is reported as any refusal is.
    @Test("a refusal after the one correction is reported, never a loop")
    func clockSkewNeverLoops() async throws {
        try await withFCMSandbox { harness in
            let reads = ClockReads()
            let client = try harness.makeClient(clock: .init(monotonic: { .now }, unixSeconds: {
                // The first assertion and the refusal's arrival an hour behind, the retry two hours behind.
                Int(Date().timeIntervalSince1970) - (reads.next() < 2 ? 3600 : 7200)
            }))
            let first = await client.tokens.accessToken()
            guard case let .failure(error) = first else {
                Issue.record("a second refusal must be reported: \(first)")
                return
            }
            #expect(error.code == .refused)
            #expect(error.message.contains("invalid_grant: Invalid JWT: Token must be a short-lived token"), "\(error.message)")
            #expect(harness.sandbox.accessTokenGrantsRefused == 2, "the assertion, then its one correction")
            // Asked again at once: told the refusal, without a third assertion.
            if case .success = await client.tokens.accessToken() { Issue.record("no token was granted") }
            #expect(harness.sandbox.accessTokenGrantsRefused == 2)
            #expect(harness.sandbox.accessTokensIssued == 0)
            await client.shutdown()
        }
    }

    @Test("a revoked service account: the token endpoint refuses it, and the devices wait as a credentials problem")
    func revoked() async throws {
        try await withFCMSandbox { harness in
            let client = try harness.makeClient()
            let job = try fcmJob()
            #expect(await client.send(job, to: "device-0000000000000001").outcome == .sent)
            harness.sandbox.setServiceAccountRevoked(true)
            var results = [await client.send(job, to: "device-0000000000000002")]
            #expect(results[0].asksForNewCredentials)
            let resent = await client.renewCredentialsAndResend(&results) { _ in
                Issue.record("nothing to resend without a token")
                return []
            }
            #expect(resent == 0)
            guard case let .credentialsProblem(reason) = results[0].outcome else {
                Issue.record("a refused service account is a credentials problem: \(results[0].outcome)")
                return
            }
            #expect(reason.contains("pushworker@pushworker-sandbox.iam.gserviceaccount.com"), "\(reason)")
            #expect(reason.contains("invalid_grant"), "\(reason)")
            #expect(!reason.contains("PRIVATE KEY"))
            // Later sends are told at once, without asking the endpoint again.
            let later = await client.send(job, to: "device-0000000000000003")
            if case .credentialsProblem = later.outcome {} else { Issue.record("\(later.outcome)") }
            #expect(later.reason == "AccessTokenRefused")
            await client.shutdown()
        }
    }
}
