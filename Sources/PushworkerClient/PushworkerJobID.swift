/// The id of a published job: the `id` of its JSON, the AMQP `message_id`, and the `job_id` of
/// every event the worker publishes about it.
public struct PushworkerJobID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }
}
