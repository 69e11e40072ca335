import AMQP
import Synchronization

/// A confirmed publish that gives up waiting after a time: the AMQP client's own wait has no
/// limit (its completion comes on the confirm, a return, or the connection's loss).
enum ConfirmedPublish {
    /// nil when `timeout` passed first.
    static func publish(_ amqp: AMQPClient, routingKey: String, body: [UInt8], properties: AMQPProperties,
                        timeout: Duration) async -> Result<Void, AMQPError>? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, AMQPError>?, Never>) in
            let once = ResumeOnce(continuation)
            let timer = Task {
                // Cancelled: the answer came first (and was given first).
                guard (try? await Task.sleep(for: timeout)) != nil else { return }
                once.resume(nil)
            }
            amqp.publish(exchange: "", routingKey: routingKey, body: body, properties: properties, mandatory: true) { result in
                once.resume(result)
                timer.cancel()
            }
        }
    }
}

/// Resumes a continuation with the first answer; later ones are dropped.
private final class ResumeOnce<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, Never>?>

    init(_ continuation: CheckedContinuation<Value, Never>) {
        self.continuation = Mutex(continuation)
    }

    func resume(_ value: Value) {
        let waiting = continuation.withLock { continuation in
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(returning: value)
    }
}
