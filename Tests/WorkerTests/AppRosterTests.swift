import APNs
import APNsCore
import Logging
import NIOConcurrencyHelpers
import PushCore
import PushTransport
import Testing
@testable import Worker

/// A reload's apps: new jobs get the new clients, jobs begun earlier keep theirs, and the clients a
/// reload took out are handed back for shutdown only once those earlier jobs have settled.
@Suite struct AppRosterTests {
    /// A throwaway P-256 key made for these tests (it signs nothing that leaves the process).
    static let keyPEM = Array("""
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgp4A8XvaSodTJaYXh
        etPlXsA+SeVAYo12CG9TyFpnz42hRANCAARaY4Wrp3yddUvZJx28qlwdneCKZ1m3
        V74f/XlxwSlU+ZUPm8vw1T3xxq8/wyloOKDWgJkQ7ShXlX7xLMzxeQqZ
        -----END PRIVATE KEY-----
        """.utf8)

    static func client(_ topic: String) throws -> APNsClient {
        let provider = try APNsTokenProvider(keyPEM: keyPEM, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        return try APNsClient(configuration: APNsConfiguration(url: "https://127.0.0.1:1", credentials: .token(provider), topic: topic),
                              logger: Logger(label: "test"))
    }

    static func served(_ clients: [String: APNsClient]) -> [String: ServedApp] {
        clients.mapValues { ServedApp(transport: $0, rules: APNsJobRules(), pruneInvalidTokens: false, metrics: WorkerMetrics().appMetrics(app: "test", platform: "apns")) }
    }

    @Test func newJobsGetTheNewClientsAndEarlierJobsKeepTheirs() async throws {
        let oldA = try Self.client("a"), oldB = try Self.client("b"), kept = try Self.client("k")
        let roster = AppRoster(apps: Self.served(["a": oldA, "b": oldB, "k": kept]))
        let earlier = roster.enter()
        let keptBreaker = roster.app("k")?.breaker

        let newA = try Self.client("a2")
        let old = roster.replace(with: Self.served(["a": newA]), keeping: ["k"])
        #expect(roster.transport(for: "a") === newA)
        #expect(roster.transport(for: "k") === kept && roster.app("k")?.breaker === keptBreaker, "an unchanged app keeps its client")
        #expect(roster.current.apps["b"] == nil, "b is no app for new jobs")
        #expect(roster.transport(for: "b") === oldB, "a job begun before the reload still finds b's client")
        let later = roster.enter()

        let retired = NIOLockedValueBox<[any PushTransport]?>(nil)
        let retirement = Task {
            let clients = await roster.retire(old)
            retired.withLockedValue { $0 = clients }
        }
        // Observed progress: the retirement waits; it cannot finish while the earlier job runs.
        while roster.retirementsWaiting == 0 { await Task.yield() }
        #expect(retired.withLockedValue { $0 } == nil)
        roster.leave(later)
        #expect(roster.retirementsWaiting == 1, "a job begun after the reload does not hold it up")
        roster.leave(earlier)
        await retirement.value
        let closed = try #require(retired.withLockedValue { $0 })
        #expect(Set(closed.map { ObjectIdentifier($0) }) == [ObjectIdentifier(oldA), ObjectIdentifier(oldB)])
        #expect(roster.transport(for: "b") == nil, "once retired, a removed app is gone")
    }

    /// Two reloads in a row: a client the first kept and the second replaced is closed once, by
    /// the second's retirement, after the jobs of both earlier generations settled.
    @Test func aClientKeptByOneReloadIsClosedByTheNext() async throws {
        let first = try Self.client("a")
        let roster = AppRoster(apps: Self.served(["a": first]))
        let job = roster.enter()
        let generation0 = roster.replace(with: [:], keeping: ["a"])
        let second = try Self.client("a2")
        let generation1 = roster.replace(with: Self.served(["a": second]), keeping: [])
        roster.leave(job)
        let closedByFirst = await roster.retire(generation0)
        let closedBySecond = await roster.retire(generation1)
        #expect(closedByFirst.isEmpty)
        #expect(closedBySecond.count == 1 && closedBySecond.first === first)
    }

    /// Rules of another platform: a reload may turn an app into one.
    struct OtherPlatformRules: PlatformJobRules {
        var platformName: String { "webpush" }
        var fieldNames: [String] { [] }
        var payloadDescription: String { "" }
        func options(from fields: JobFields, payload: PayloadObject) throws(JobRejection) -> any PlatformOptions {
            throw JobRejection(field: nil, "not used")
        }
        func device(from value: JSONValue) throws(DeviceProblem) -> DeviceToken {
            throw DeviceProblem("not used")
        }
    }

    /// A reload that changes an app's platform while its jobs are in flight: a job parsed for the
    /// old platform is sent by the app it began with, never by the new one (whose transport would
    /// meet options it cannot read: a precondition failure took the process down).
    @Test func aJobKeepsTheAppOfItsPlatformAcrossAReload() throws {
        let apns = try Self.client("a")
        let roster = AppRoster(apps: Self.served(["a": apns]))
        let earlier = roster.enter()
        let job = PushJob(id: "j", app: "a", tokens: [], payload: Array("{}".utf8))
        let other = ServedApp(transport: try Self.client("w"), rules: OtherPlatformRules(), pruneInvalidTokens: false,
                              metrics: WorkerMetrics().appMetrics(app: "a", platform: "webpush"))
        _ = roster.replace(with: ["a": other], keeping: [])
        #expect(roster.app("a")?.rules.platformName == "webpush", "new jobs get the new app")
        #expect(roster.app(for: job)?.transport === apns, "the APNs job keeps the APNs app it began with")
        roster.leave(earlier)
    }
}
