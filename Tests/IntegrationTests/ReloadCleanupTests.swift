import APNs
import Foundation
import Testing
import WebPush
@testable import Worker
import WorkerConfigurationFile
import APNsTokenSharing

/// A reload starts nothing it cannot finish, and leaves nothing of what it replaced running.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ReloadCleanupTests {
    /// An APNs app of a key of its own (a provider-token loop of its own once it runs).
    static func appOfAnotherKey(_ template: APNsConfiguration) throws -> (APNsConfiguration, keyFile: String) {
        let (keyFile, _) = try ReloadTests.keyPair()
        var app = template
        app.credentials = .token(try APNsTokenProvider(keyFile: keyFile, keyID: ReloadTests.newKeyID, teamID: ReloadTests.team))
        return (app, keyFile)
    }

    /// Apps are built in order (APNs by name, Web Push, FCM); here `b` is made, then `z` cannot be.
    /// Before, `b`'s provider-token loop was already running (two loops after the refusal, and
    /// `b`'s key minted and written to Redis for as long as the worker lived). Now the reload
    /// throws with nothing started: one loop, no app `b`, and the worker goes on sending.
    @Test func aReloadThatFailsHalfwayLeavesNothingRunning() async throws {
        try await PipelineFixture.with { fixture in
            let configuration = try fixture.workerConfiguration()
            try fixture.startWorker(configuration)
            let worker = try #require(fixture.worker)
            let running = try #require(configuration[apns: "default"])
            let (b, keyFile) = try Self.appOfAnotherKey(running)
            defer { try? FileManager.default.removeItem(atPath: keyFile) }
            var z = b
            z.url = "ftp://127.0.0.1/"
            try await fixture.publish(#"{"id":"before","tokens":["\#(PipelineFixture.token(1))"],"payload":{"aps":{"alert":"x"}}}"#)
            try await waitUntil("the first job is delivered") { fixture.sandbox.received().contains { $0.status == 200 } }
            #expect(Self.tokenStore(worker).runningLoops == 1)

            await #expect(throws: AppSetupError.self) {
                try await worker.reload(apps: ["default": running, "b": b, "z": z], unchanged: ["default"])
            }
            #expect(Self.tokenStore(worker).runningLoops == 1, "the failed reload's provider never runs")
            #expect(worker.roster.app("b") == nil && worker.roster.app("z") == nil)
            try await fixture.publish(#"{"id":"after","tokens":["\#(PipelineFixture.token(2))"],"payload":{"aps":{"alert":"x"}}}"#)
            try await waitUntil("the job after the refusal is delivered") {
                fixture.sandbox.received().filter { $0.status == 200 }.count == 2
            }
        }
    }

    /// A key taken out of the file: its loop stops once the jobs begun with it settled. Before,
    /// every key ever loaded kept its loop (and went on minting and writing to Redis).
    @Test func aKeyThatLeftTheFileLosesItsLoop() async throws {
        try await PipelineFixture.with { fixture in
            let configuration = try fixture.workerConfiguration()
            try fixture.startWorker(configuration)
            let worker = try #require(fixture.worker)
            let (replacement, keyFile) = try Self.appOfAnotherKey(try #require(configuration[apns: "default"]))
            defer { try? FileManager.default.removeItem(atPath: keyFile) }
            try await waitUntil("the first key's loop runs") { Self.tokenStore(worker).runningLoops == 1 }

            try await worker.reload(apps: ["default": replacement], unchanged: [])
            // The new key's loop starts at once; the old one stops when the old generation retires.
            try await waitUntil("one loop, the new key's") {
                Self.tokenStore(worker).runningLoops == 1 && worker.roster.current.generation == 1
                    && Self.tokenStore(worker).runningKeys.allSatisfy { $0.contains(ReloadTests.newKeyID) }
            }
        }
    }

    /// An app's platform is its jobs' format: a reload that would move an app to another platform
    /// is refused, naming the app, and the app goes on as it was.
    @Test func aReloadCannotChangeAnAppsPlatform() async throws {
        try await PipelineFixture.with { fixture in
            let configuration = try fixture.workerConfiguration()
            try fixture.startWorker(configuration)
            let worker = try #require(fixture.worker)
            let web = WebPushConfiguration(vapidKey: try VAPIDKey.generate(), subject: try VAPIDSubject("mailto:push@example.com"))
            do throws(AppSetupError) {
                try await worker.reload(apps: ["default": web], unchanged: [])
                Issue.record("the reload was taken")
            } catch {
                #expect(error.app == "default")
                #expect(error.problem.contains("cannot change an app's platform (apns to webpush)"), "\(error.problem)")
            }
            #expect(worker.roster.app("default")?.rules.platformName == "apns")
            try await fixture.publish(#"{"id":"kept","tokens":["\#(PipelineFixture.token(3))"],"payload":{"aps":{"alert":"x"}}}"#)
            try await waitUntil("the app still sends over APNs") { fixture.sandbox.received().contains { $0.status == 200 } }
        }
    }

    /// The worker's provider-token store, as the fixture made it.
    private static func tokenStore(_ worker: PushWorker) -> APNsProviderTokenStore {
        guard let store = worker.credentialStore as? APNsProviderTokenStore else { fatalError("the fixture gives every worker an APNsProviderTokenStore") }
        return store
    }
}
