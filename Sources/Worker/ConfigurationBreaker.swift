import PushCore
import PushTransport
import NIOConcurrencyHelpers

/// Tells a configuration mistake from bad devices. A wrong APNs environment makes APNs answer
/// `BadDeviceToken` for every device (a wrong topic `DeviceTokenNotForTopic`, a wrong FCM project
/// `SENDER_ID_MISMATCH`); taken one by one, those would become `token.invalid` events and
/// applications would delete every token. So the answers of one app are watched over a sliding
/// window, each read by its platform (`PushTransport.configurationFit`): when at least
/// `minimumMismatches` of the last `window` answers, and at least half of them, say the token does
/// not fit, the breaker trips and such answers mean "configuration problem" instead: the devices
/// are held untouched and the app pauses as for refused credentials. Answers only the
/// configuration can cause trip it at once. Ordinary traffic with some stale tokens stays far
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

    /// The results with mismatches turned into `credentialsProblem` while the breaker is tripped,
    /// each read by `transport` for `job`.
    func screen(_ results: [PushResult], job: PushJob, transport: any PushTransport) -> [PushResult] {
        var screened = results
        state.withLockedValue { state in
            for index in screened.indices {
                switch transport.configurationFit(of: screened[index], job: job) {
                case .unknown:
                    continue
                case .fits:
                    state.record(false)
                case .misconfigured(let reason):
                    screened[index].outcome = .credentialsProblem(reason: reason)
                case .mismatch(let suspect, let check):
                    state.record(true)
                    if state.tripped {
                        screened[index].outcome = .credentialsProblem(reason: "\(suspect) for \(state.mismatches) of the last \(state.answers.count) devices (\(check))")
                    }
                }
            }
        }
        return screened
    }
}
