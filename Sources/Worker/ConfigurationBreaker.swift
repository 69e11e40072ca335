import APNs
import PushCore
import NIOConcurrencyHelpers

/// Tells a configuration mistake from bad devices. A wrong environment makes APNs answer
/// `BadDeviceToken` for every device (and a wrong topic `DeviceTokenNotForTopic`); taken one by
/// one, those would become `token.invalid` events and applications would delete every token. So
/// the answers of one app are watched over a sliding window: when at least `minimumMismatches` of
/// the last `window` answers, and at least half of them, say the token does not fit, the breaker
/// trips and such answers mean "configuration problem" instead: the devices are held untouched and
/// the app pauses as for refused credentials. `BadTopic`, `TopicDisallowed` and `MissingTopic`
/// trip it at once (no device can cause them). Ordinary traffic with some stale tokens stays far
/// below half and never trips it.
final class ConfigurationBreaker: Sendable {
    static let window = 200
    static let minimumMismatches = 50

    private struct State {
        /// The last answers, true where the token did not fit; a ring of `window` entries.
        var answers: [Bool] = []
        var next = 0
        var mismatches = 0

        var tripped: Bool {
            mismatches >= ConfigurationBreaker.minimumMismatches && mismatches * 2 >= answers.count
        }

        mutating func record(_ mismatch: Bool) {
            if answers.count < ConfigurationBreaker.window {
                answers.append(mismatch)
            } else {
                if answers[next] { mismatches -= 1 }
                answers[next] = mismatch
                next = (next + 1) % ConfigurationBreaker.window
            }
            if mismatch { mismatches += 1 }
        }
    }
    private let state = NIOLockedValueBox(State())

    /// The results with mismatches turned into `credentialsProblem` while the breaker is tripped.
    /// `jobTopic`: the job chose its own topic, so a topic refusal is that job's fault (it stays a
    /// `delivery.failed`), not the app's configuration.
    func screen(_ results: [APNsResult], jobTopic: Bool = false) -> [APNsResult] {
        var screened = results
        state.withLockedValue { state in
            for index in screened.indices {
                let result = screened[index]
                guard result.status != 0 else { continue }   // no answer: says nothing about the configuration
                // Accepted (no reason): a plain answer, without hashing "" into three sets.
                guard let reason = result.reason else {
                    state.record(false)
                    continue
                }
                if !jobTopic, Self.topicReasons.contains(reason) {
                    screened[index].outcome = .credentialsProblem(reason: "environment or topic mismatch? APNs answered \(reason): the topic does not fit these credentials (check --apns-topic)")
                    continue
                }
                if Self.environmentReasons.contains(reason) {
                    screened[index].outcome = .credentialsProblem(reason: "environment or topic mismatch? APNs answered \(reason): the key or certificate belongs to the other environment (check --apns-environment)")
                    continue
                }
                let mismatch = Self.mismatchReasons.contains(reason)
                state.record(mismatch)
                if mismatch, state.tripped {
                    screened[index].outcome = .credentialsProblem(reason: "environment or topic mismatch? APNs answered \(reason) for \(state.mismatches) of the last \(state.answers.count) devices (check --apns-environment and --apns-topic)")
                }
            }
        }
        return screened
    }

    static let mismatchReasons: Set<String> = ["BadDeviceToken", "DeviceTokenNotForTopic"]
    static let topicReasons: Set<String> = ["BadTopic", "TopicDisallowed", "MissingTopic"]
    /// Already credentials problems (PushCore maps them so); named for what they mean.
    static let environmentReasons: Set<String> = ["BadEnvironmentKeyIdInToken", "BadEnvironmentKeyInToken", "BadCertificateEnvironment"]
}
