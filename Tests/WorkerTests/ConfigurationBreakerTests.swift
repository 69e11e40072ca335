import APNs
import APNsCore
import PushCore
import PushTransport
import Testing
@testable import Worker

@Suite("Configuration breaker")
struct ConfigurationBreakerTests {
    /// APNs reads the answers: the breaker counts what its `configurationFit` says.
    let transport: APNsClient
    let job = PushJob(id: "j", tokens: [], payload: Array(#"{"aps":{}}"#.utf8))
    let jobWithTopic = PushJob(id: "t", tokens: [], topic: "com.example.other", payload: Array(#"{"aps":{}}"#.utf8))

    init() throws { transport = try AppRosterTests.client("com.example.app") }

    private func answers(_ count: Int, status: Int, reason: String?) -> [PushResult] {
        Array(repeating: PushResult(status: status, reason: reason, outcome: DeliveryOutcome(apnsStatus: status, reason: reason)), count: count)
    }

    private func screen(_ breaker: ConfigurationBreaker, _ results: [PushResult], jobTopic: Bool = false) -> [PushResult] {
        breaker.screen(results, job: jobTopic ? jobWithTopic : job, transport: transport)
    }

    private func isHeld(_ result: PushResult) -> Bool {
        if case .credentialsProblem = result.outcome { true } else { false }
    }

    @Test func aWrongEnvironmentTripsItAfterFiftyMismatches() {
        let breaker = ConfigurationBreaker()
        let first = screen(breaker, answers(49, status: 400, reason: "BadDeviceToken"))
        #expect(!first.contains(where: isHeld))
        let next = screen(breaker, answers(10, status: 400, reason: "BadDeviceToken"))
        #expect(next.allSatisfy(isHeld))
        #expect(next.first.map { "\($0.outcome)" }?.contains("environment or topic mismatch?") == true)
    }

    /// One answer is enough where no device can be the cause; the log and /status say what to check.
    @Test(arguments: ["BadTopic", "TopicDisallowed", "MissingTopic", "BadEnvironmentKeyIdInToken", "BadCertificateEnvironment"])
    func topicAndEnvironmentAnswersPauseAtOnceNamingTheMismatch(reason: String) {
        let status = reason.hasPrefix("BadCertificate") ? 403 : 400
        let screened = screen(ConfigurationBreaker(), answers(1, status: status, reason: reason))
        #expect(screened.allSatisfy(isHeld))
        #expect(screened.first.map { "\($0.outcome)" }?.contains("environment or topic mismatch? APNs answered \(reason)") == true)
    }

    @Test func staleTokensInNormalTrafficNeverTripIt() {
        let breaker = ConfigurationBreaker()
        for _ in 0..<50 {
            // 10% stale tokens, in the worst order: all of a batch's mismatches first.
            let batch = answers(10, status: 400, reason: "BadDeviceToken") + answers(90, status: 200, reason: nil)
            #expect(!screen(breaker, batch).contains(where: isHeld))
        }
    }

    @Test func aWrongTopicTripsItAtOnceUnlessTheJobChoseTheTopic() {
        let breaker = ConfigurationBreaker()
        #expect(screen(breaker, answers(1, status: 400, reason: "TopicDisallowed")).allSatisfy(isHeld))
        let chosen = screen(breaker, answers(1, status: 400, reason: "BadTopic"), jobTopic: true)
        #expect(!chosen.contains(where: isHeld))
    }

    @Test func unansweredRequestsSayNothing() {
        let breaker = ConfigurationBreaker()
        _ = screen(breaker, answers(200, status: 0, reason: "Timeout"))
        _ = screen(breaker, answers(49, status: 400, reason: "BadDeviceToken"))
        #expect(!screen(breaker, answers(1, status: 200, reason: nil)).contains(where: isHeld))
    }
}
