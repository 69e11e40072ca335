import FCM
import Foundation
import Logging
import PushCore
import Sandbox
import Testing
import WebPush
@testable import Worker

/// One worker serving an APNs app, an FCM app and a Web Push app from one job queue, against the
/// APNs sandbox, the FCM sandbox (its own OAuth token endpoint) and the Web Push sandbox (which
/// decrypts every message), RabbitMQ and Redis.
@Suite(.serialized, .timeLimit(.minutes(4)))
struct MixedFleetTests {
    struct WebPushWorld {
        let sandbox: WebPushSandbox
        let key: VAPIDKey
        let fcm: FCMSandbox
    }

    /// - Parameter trustSandbox: the Web Push sandbox counts as a trusted push service, whose
    ///   refusals of several subscriptions blame the app's key (`WebPushRefusalJudge`).
    static func withMixedFleet(credentialsRetryInterval: Duration = .seconds(60), retryDelays: [Duration] = [.milliseconds(300), .milliseconds(300)],
                               trustSandbox: Bool = false, configure: (inout WorkerConfiguration) -> Void = { _ in },
                               _ body: (PipelineFixture, WebPushWorld) async throws -> Void) async throws {
        try await PipelineFixture.with { fixture in
            let sandbox = WebPushSandbox(stateDirectory: fixture.stateDirectory, logger: fixture.logger)
            let sandboxPort = try await sandbox.start()
            var fcmSandboxConfiguration = SandboxConfiguration()
            fcmSandboxConfiguration.port = 0
            // A directory of its own: its service-account file names its port.
            fcmSandboxConfiguration.stateDirectory = fixture.stateDirectory + "-fcm-" + fixture.name
            var fcmSettings = FCMSandboxConfiguration()
            fcmSettings.retryAfterSeconds = 1
            let fcm = FCMSandbox(configuration: fcmSandboxConfiguration, fcm: fcmSettings, logger: fixture.logger)
            let fcmPort = try await fcm.start()
            let key = try VAPIDKey.generate()
            var web = WebPushConfiguration(vapidKey: key, subject: try VAPIDSubject("mailto:push@example.com"))
            web.extraCAFile = fixture.sandbox.material.caCertificateFile
            // The sandbox is on 127.0.0.1, on a port of its own.
            web.allowPrivateEndpoints = true
            web.allowedEndpointPorts = nil
            if trustSandbox { web.trustedPushServices = [try #require(WebPushServiceName("127.0.0.1:\(sandboxPort)"))] }
            // The services' own timeout: a request merely slow on a loaded machine is not sent twice.
            web.requestTimeout = .seconds(30)
            var configuration = try fixture.workerConfiguration(retryDelays: retryDelays, requestTimeout: .seconds(30))
            configuration.apps["web"] = web
            var android = try FCMConfiguration(serviceAccountFile: fcm.fcmMaterial.serviceAccountFile, url: "https://127.0.0.1:\(fcmPort)")
            android.extraCAFile = fcm.material.caCertificateFile
            configuration.apps["android"] = android
            configuration.credentialsRetryInterval = credentialsRetryInterval
            configure(&configuration)
            try fixture.startWorker(configuration)
            do {
                try await body(fixture, WebPushWorld(sandbox: sandbox, key: key, fcm: fcm))
            } catch {
                await sandbox.stop()
                await fcm.stop()
                throw error
            }
            await sandbox.stop()
            await fcm.stop()
        }
    }

    static func plaintexts(_ sandbox: WebPushSandbox) -> [String: [String]] {
        Dictionary(grouping: sandbox.received().filter { $0.status == 201 }, by: \.subscriptionID)
            .mapValues { $0.map { String(decoding: $0.plaintext, as: UTF8.self) } }
    }

    /// Jobs of the three platforms interleaved, each with explicit devices and a group of its own
    /// platform: every device gets its message once, a gone subscription or token is a token.invalid
    /// event, and each job completes.
    @Test func oneWorkerServesAnAPNsAnFCMAndAWebPushApp() async throws {
        try await Self.withMixedFleet { fixture, web in
            let subscriptions = try web.sandbox.subscribe(count: 6, applicationServerKey: web.key.publicKey)
            web.sandbox.unsubscribe(subscriptions[5].id)
            // A Web Push group holds subscriptions in either form; one member is also named in the job.
            _ = try await fixture.redis.setAdd(key: "\(fixture.groupPrefix)web:fans",
                                               members: [subscriptions[2].compact, subscriptions[3].json, subscriptions[1].compact])
            let iosTokens = (0..<3).map { PipelineFixture.token(81_000 + $0) }
            try await fixture.addToGroup("ios-fans", [iosTokens[2]])

            let androidTokens = (0..<4).map { "android-\(fixture.name)-\($0)-" + String(repeating: "x", count: 40) }
            web.fcm.setRules([SandboxRule(tokenPrefix: "android-\(fixture.name)-3", status: 404, reason: "UNREGISTERED")])
            _ = try await fixture.redis.setAdd(key: "\(fixture.groupPrefix)android:phones", members: [androidTokens[2], androidTokens[3]])
            try await fixture.publish(#"{"id":"android-1","app":"android","tokens":["\#(androidTokens[0])","\#(androidTokens[1])"],"groups":["phones"],"priority":10,"collapse_id":"news","expiration":"+600","payload":{"notification":{"title":"to Android"},"data":{"k":"v"}}}"#)
            try await fixture.publish(#"{"id":"ios-1","app":"default","tokens":["\#(iosTokens[0])","\#(iosTokens[1])"],"groups":["ios-fans"],"payload":{"aps":{"alert":"to iOS"}}}"#)
            try await fixture.publish(#"{"id":"web-1","app":"web","tokens":[\#(subscriptions[0].json),"\#(subscriptions[1].compact)","\#(subscriptions[4].compact)","\#(subscriptions[5].compact)"],"groups":["fans"],"priority":10,"collapse_id":"news","payload":{"title":"to browsers"}}"#)

            let events = try await fixture.events { events in
                events.filter { $0.routingKey == "job.completed" }.count >= 3
            }
            let completed = Dictionary(events.filter { $0.routingKey == "job.completed" }.map { ($0.string("job_id") ?? "", $0) }) { first, _ in first }
            #expect(completed["android-1"]?.int("sent") == 3)
            #expect(completed["android-1"]?.int("invalid") == 1)
            let androidInvalidEvent = events.first { $0.routingKey == "token.invalid" && $0.string("app") == "android" }
            let androidInvalid = try #require(androidInvalidEvent)
            #expect(androidInvalid.string("token") == androidTokens[3])
            #expect(androidInvalid.string("reason")?.hasPrefix("UNREGISTERED") == true)
            let accepted = web.fcm.received().filter { $0.status == 200 }
            #expect(accepted.map(\.token).sorted() == Array(androidTokens[0...2]).sorted(), "each once, tokens and group")
            let acceptedWithJobFields = accepted.allSatisfy { $0.priority == 10 && $0.collapseID == "news" && ($0.expiration ?? 0) > 0 }
            #expect(acceptedWithJobFields)
            #expect(completed["ios-1"]?.int("sent") == 3)
            #expect(completed["web-1"]?.int("sent") == 5)
            #expect(completed["web-1"]?.int("invalid") == 1)
            #expect(completed["web-1"]?.fields["apns_id_first"] == nil, "Web Push names its messages itself")
            #expect(completed["ios-1"]?.string("apns_id_first") != nil)

            let webInvalidEvent = events.first { $0.routingKey == "token.invalid" && $0.string("app") == "web" }
            let invalid = try #require(webInvalidEvent)
            #expect(invalid.string("app") == "web")
            #expect(invalid.string("token") == subscriptions[5].compact, "the device as the job gave it")
            #expect(invalid.int("status") == 410)
            #expect(invalid.fields["apns_id"] == nil)

            let delivered = Self.plaintexts(web.sandbox)
            #expect(Set(delivered.keys) == Set(subscriptions[0...4].map(\.id)), "every live subscription, from tokens and the group")
            let eachDecryptedOnce = delivered.values.allSatisfy { $0 == [#"{"title":"to browsers"}"#] }
            #expect(eachDecryptedOnce, "each once, decrypted as sent")
            let acceptedUrgentNews = web.sandbox.received().filter { $0.status == 201 }.allSatisfy { $0.urgency == "high" && $0.topic == "news" }
            #expect(acceptedUrgentNews)
            let apns = fixture.sandbox.received().filter { $0.status == 200 }
            #expect(apns.map(\.token).sorted() == iosTokens.sorted())
        }
    }

    /// A job of one platform names a field of the other: rejected with the field named, not sent.
    @Test func anotherPlatformsFieldIsRejected() async throws {
        try await Self.withMixedFleet { fixture, web in
            let subscription = try #require(try web.sandbox.subscribe(count: 1).first)
            try await fixture.publish(#"{"id":"web-bad","app":"web","tokens":["\#(subscription.compact)"],"push_type":"alert","payload":{"title":"x"}}"#)
            let events = try await fixture.events { $0.contains { $0.routingKey == "job.rejected" } }
            let rejectedEvent = events.first { $0.routingKey == "job.rejected" }
            let rejected = try #require(rejectedEvent)
            #expect(rejected.string("field") == "push_type")
            #expect(rejected.string("error")?.contains("apns") == true)
            #expect(web.sandbox.received().isEmpty)
        }
    }

    /// The push service throttles a subscription once (429 with Retry-After): the device goes to
    /// a delay queue and its retry is delivered; nothing is lost or sent twice.
    @Test func aThrottledSubscriptionIsRetriedAndDelivered() async throws {
        try await Self.withMixedFleet(retryDelays: [.milliseconds(300), .seconds(1)]) { fixture, web in
            let subscriptions = try web.sandbox.subscribe(count: 2)
            web.sandbox.setRules([WebPushSandboxRule(idPrefix: subscriptions[0].id, status: 429, reason: "QuotaExceeded", retryAfterSeconds: 1, times: 1)])
            try await fixture.publish(#"{"id":"web-q","app":"web","tokens":["\#(subscriptions[0].compact)","\#(subscriptions[1].compact)"],"payload":{"n":1}}"#)
            let events = try await fixture.events { events in
                events.filter { $0.routingKey == "job.completed" }.count >= 2
            }
            let rounds = events.filter { $0.routingKey == "job.completed" }.sorted { ($0.int("attempt") ?? 0) < ($1.int("attempt") ?? 0) }
            #expect(rounds.first?.int("sent") == 1 && rounds.first?.int("retried") == 1)
            #expect(rounds.last?.int("attempt") == 2 && rounds.last?.int("sent") == 1)
            let delivered = Self.plaintexts(web.sandbox)
            #expect(delivered[subscriptions[0].id]?.count == 1 && delivered[subscriptions[1].id]?.count == 1)
            let throttledCount = web.sandbox.received().filter { $0.status == 429 }.count
            #expect(throttledCount == 1)
            let anyFailed = events.contains { $0.routingKey == "delivery.failed" }
            #expect(!anyFailed)
        }
    }

    /// The Web Push app's VAPID key is revoked at a trusted push service: that app pauses (its
    /// jobs wait, none is failed or dead-lettered; the first refusals retry while the evidence
    /// gathers) while the APNs app's jobs flow; once the key is accepted again every held message
    /// is delivered once.
    @Test func aRevokedVAPIDKeyPausesOnlyItsApp() async throws {
        try await Self.withMixedFleet(credentialsRetryInterval: .milliseconds(500), trustSandbox: true) { fixture, web in
            let subscriptions = try web.sandbox.subscribe(count: 20)
            web.sandbox.revoke(vapidPublicKey: web.key.publicKey)
            let iosTokens = (0..<20).map { PipelineFixture.token(82_000 + $0) }
            for index in 0..<20 {
                try await fixture.publish(#"{"id":"web-\#(index)","app":"web","tokens":["\#(subscriptions[index].compact)"],"payload":{"n":\#(index)}}"#)
                try await fixture.publish(#"{"id":"ios-\#(index)","app":"default","tokens":["\#(iosTokens[index])"],"payload":{"aps":{"alert":"x"}}}"#)
            }
            try await waitUntil("every APNs job is delivered while the Web Push app is held", timeout: .seconds(60)) {
                Set(fixture.sandbox.received().filter { $0.status == 200 }.map(\.token)).count == 20
            }
            let worker = try #require(fixture.worker)
            // Observed, not assumed: the web jobs may still be on their way to their first refusal.
            try await waitUntil("the Web Push app is paused", timeout: .seconds(30)) {
                worker.status.snapshot.credentialProblems["web"] != nil
            }
            let allRefused = web.sandbox.received().allSatisfy { $0.status == 403 }
            #expect(allRefused, "nothing of the web app got through")
            #expect(worker.status.snapshot.credentialProblems["default"] == nil)

            web.sandbox.reinstate(vapidPublicKey: web.key.publicKey)
            try await waitUntil("every held Web Push job is delivered", timeout: .seconds(90)) {
                Self.plaintexts(web.sandbox).count == 20
            }
            let eachDeliveredOnce = Self.plaintexts(web.sandbox).values.allSatisfy { $0.count == 1 }
            #expect(eachDeliveredOnce, "each once")
            #expect(try await fixture.control.messageCount(queue: fixture.deadQueue) == 0)
            let events = try await fixture.events { events in
                events.filter { $0.routingKey == "job.completed" && $0.string("app") == "web" }.count >= 20
            }
            let anyFailedOrInvalid = events.contains { $0.routingKey == "delivery.failed" || $0.routingKey == "token.invalid" }
            #expect(!anyFailedOrInvalid)
        }
    }

    /// FCM says QUOTA_EXCEEDED (429) for the project: the device waits at least a minute (Google
    /// asks for that much before retrying project quota), here in the 60 s delay queue rather than
    /// the ladder's 300 ms one, and its retry is delivered, once.
    @Test func fcmQuotaIsADelayedRetryThatSucceeds() async throws {
        try await Self.withMixedFleet(retryDelays: [.milliseconds(300), .seconds(1), .seconds(60)]) { fixture, web in
            let tokens = (0..<2).map { "quota-\(fixture.name)-\($0)-" + String(repeating: "q", count: 40) }
            web.fcm.setRules([SandboxRule(tokenPrefix: tokens[0], status: 429, reason: "QUOTA_EXCEEDED", times: 1)])
            try await fixture.publish(#"{"id":"android-q","app":"android","tokens":["\#(tokens[0])","\#(tokens[1])"],"payload":{"data":{"n":"1"}}}"#)
            let events = try await fixture.events(timeout: .seconds(150)) { events in
                events.filter { $0.routingKey == "job.completed" }.count >= 2
            }
            let rounds = events.filter { $0.routingKey == "job.completed" }.sorted { ($0.int("attempt") ?? 0) < ($1.int("attempt") ?? 0) }
            #expect(rounds.first?.int("sent") == 1 && rounds.first?.int("retried") == 1)
            #expect(rounds.last?.int("attempt") == 2 && rounds.last?.int("sent") == 1)
            let accepted = web.fcm.received().filter { $0.status == 200 }.map(\.token)
            #expect(accepted.sorted() == tokens.sorted(), "each once")
            let anyFailed = events.contains { $0.routingKey == "delivery.failed" }
            #expect(!anyFailed)
        }
    }

    /// The FCM app's service account is revoked: the token endpoint refuses it, so that app pauses
    /// (its jobs wait, none failed or dead-lettered) while the APNs app's jobs flow; restored, every
    /// held Android message is delivered once.
    @Test func aRevokedServiceAccountPausesOnlyItsApp() async throws {
        try await Self.withMixedFleet(credentialsRetryInterval: .milliseconds(500)) { fixture, web in
            web.fcm.setServiceAccountRevoked(true)
            let androidTokens = (0..<10).map { "revoked-\(fixture.name)-\($0)-" + String(repeating: "r", count: 40) }
            let iosTokens = (0..<10).map { PipelineFixture.token(83_000 + $0) }
            for index in 0..<10 {
                try await fixture.publish(#"{"id":"android-\#(index)","app":"android","tokens":["\#(androidTokens[index])"],"payload":{"data":{"n":"\#(index)"}}}"#)
                try await fixture.publish(#"{"id":"ios-\#(index)","app":"default","tokens":["\#(iosTokens[index])"],"payload":{"aps":{"alert":"x"}}}"#)
            }
            try await waitUntil("every APNs job is delivered while the FCM app is held", timeout: .seconds(60)) {
                Set(fixture.sandbox.received().filter { $0.status == 200 }.map(\.token)).count == 10
            }
            let worker = try #require(fixture.worker)
            try await waitUntil("the FCM app is paused", timeout: .seconds(30)) {
                worker.status.snapshot.credentialProblems["android"] != nil
            }
            let anyAccepted = web.fcm.received().contains { $0.status == 200 }
            #expect(!anyAccepted, "nothing of the FCM app got through")
            #expect(worker.status.snapshot.credentialProblems["default"] == nil)

            web.fcm.setServiceAccountRevoked(false)
            try await waitUntil("every held FCM job is delivered", timeout: .seconds(90)) {
                Set(web.fcm.received().filter { $0.status == 200 }.map(\.token)).count == 10
            }
            let acceptedCount = web.fcm.received().filter { $0.status == 200 }.count
            #expect(acceptedCount == 10, "each once")
            #expect(try await fixture.control.messageCount(queue: fixture.deadQueue) == 0)
            let events = try await fixture.events { events in
                events.filter { $0.routingKey == "job.completed" && $0.string("app") == "android" }.count >= 10
            }
            let anyFailedOrInvalid = events.contains { $0.routingKey == "delivery.failed" || $0.routingKey == "token.invalid" }
            #expect(!anyFailedOrInvalid)
        }
    }

    /// FCM tokens may be 4 KB, far longer than an APNs token: a fan-out chunk of them can exceed the
    /// worker's own message limit. Such a chunk goes out in halves, so that no chunk job is rejected
    /// by the worker that reads it and every device is delivered once.
    @Test func chunksOfLongDevicesStayWithinTheMessageLimit() async throws {
        try await Self.withMixedFleet(configure: { configuration in
            configuration.chunkSize = 100
            configuration.maxMessageBytes = 64 * 1024
        }) { fixture, web in
            let tokens = (0..<300).map { "long-\(fixture.name)-\($0)-" + String(repeating: "L", count: 2000) }
            _ = try await fixture.redis.setAdd(key: "\(fixture.groupPrefix)android:everyone", members: tokens)
            try await fixture.publish(#"{"id":"android-big","app":"android","groups":["everyone"],"payload":{"data":{"n":"1"}}}"#)
            try await waitUntil("every long token is delivered", timeout: .seconds(90)) {
                Set(web.fcm.received().filter { $0.status == 200 }.map(\.token)).count == tokens.count
            }
            let acceptedCount = web.fcm.received().filter { $0.status == 200 }.count
            #expect(acceptedCount == tokens.count, "each once")
            let events = try await fixture.events { events in
                events.filter { $0.routingKey == "job.completed" }.reduce(0) { $0 + ($1.int("sent") ?? 0) } >= tokens.count
            }
            let anyRejected = events.contains { $0.routingKey == "job.rejected" }
            #expect(!anyRejected, "no chunk job over the limit")
            let parentEvent = events.first { $0.routingKey == "job.completed" && ($0.int("chunks") ?? 0) > 0 }
            let parent = try #require(parentEvent)
            #expect((parent.int("chunks") ?? 0) > 3, "chunks of 100 long tokens went out in smaller pieces")
            #expect(try await fixture.control.messageCount(queue: fixture.deadQueue) == 0)
        }
    }
}
