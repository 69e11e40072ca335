import NIOConcurrencyHelpers
import PushCore
import PushTransport

/// A `PushTransport` whose answers a test scripts: each send is recorded, and answered at once
/// with what `answer` says, or held (when it says nil) until the test answers it with
/// `answerHeld`. No thread, socket or platform: the worker's rounds and budget run over it as
/// they do over a real client.
final class RecordingTransport: PushTransport {
    struct Sent: Sendable {
        let device: DeviceToken
        let requestID: String
    }

    private struct State {
        var sent: [Sent] = []
        var held: [(device: DeviceToken, completion: @Sendable (PushResult) -> Void)] = []
    }

    private let answer: @Sendable (DeviceToken) -> PushResult?
    private let state = NIOLockedValueBox(State())
    let streamCapacity: Int

    static let accepted = PushResult(status: 200, reason: nil, outcome: .sent)

    init(streamCapacity: Int = 1000, answer: @escaping @Sendable (DeviceToken) -> PushResult? = { _ in RecordingTransport.accepted }) {
        self.streamCapacity = streamCapacity
        self.answer = answer
    }

    func send(_ job: PushJob, to device: DeviceToken, requestID: String, completion: @escaping @Sendable (PushResult) -> Void) {
        state.withLockedValue { $0.sent.append(Sent(device: device, requestID: requestID)) }
        if let result = answer(device) {
            completion(result)
        } else {
            state.withLockedValue { $0.held.append((device, completion)) }
        }
    }

    var sent: [Sent] { state.withLockedValue { $0.sent } }
    var heldDevices: [DeviceToken] { state.withLockedValue { $0.held.map(\.device) } }

    /// Answers every held send with `result`.
    func answerHeld(_ result: PushResult = RecordingTransport.accepted) {
        let held = state.withLockedValue { state in
            defer { state.held = [] }
            return state.held
        }
        for send in held { send.completion(result) }
    }

    var carriesRequestIDs: Bool { true }
    var statistics: TransportStatistics { TransportStatistics() }
    func renewCredentialsAndResend(_ results: inout [PushResult], resend: ([Int]) async -> [PushResult]) async -> Int { 0 }
    func configurationFit(of result: PushResult, job: PushJob) -> ConfigurationFit { .fits }
    func shutdown() async {}
}
