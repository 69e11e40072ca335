import AMQP
import PushCore

/// A job's copy in the dead queue as `DeadLetterCopy` (Worker) writes it, read back: the job's
/// id and app from the body (or the message id when the body is not a job), why it was rejected
/// from the `x-pushworker-error` and `-field` headers, and whether the body was cut
/// (`x-pushworker-truncated-from`: the job was larger than `--max-message-bytes`; only its first
/// 64 KiB were kept, so it can never be replayed).
public struct DeadLetter: Sendable, Equatable {
    public static let errorHeader = "x-pushworker-error"
    public static let fieldHeader = "x-pushworker-field"
    public static let rejectedAtHeader = "x-pushworker-rejected-at"
    public static let truncatedFromHeader = "x-pushworker-truncated-from"

    public let id: String?
    public let app: String?
    public let field: String?
    public let error: String?
    public let rejectedAt: String?
    /// The original size of a body the copy holds only the start of.
    public let truncatedFrom: Int?
    public let bodySize: Int

    public init(body: [UInt8], properties: AMQPProperties) {
        let headers = properties.headers
        var id: String?
        var app: String?
        // A cut body is no JSON: the message id is all there is (as in its job.rejected event).
        if headers[Self.truncatedFromHeader] == nil, case .object(let members)? = try? JSONValue.parse(body) {
            if case .string(let value)? = members["id"] { id = value }
            if case .string(let value)? = members["app"] { app = value }
        }
        self.id = id ?? properties.messageID
        self.app = app
        field = Self.text(headers[Self.fieldHeader])
        error = Self.text(headers[Self.errorHeader])
        rejectedAt = Self.text(headers[Self.rejectedAtHeader])
        if case .int(let size)? = headers[Self.truncatedFromHeader] { truncatedFrom = Int(clamping: size) } else { truncatedFrom = nil }
        bodySize = body.count
    }

    public init(_ delivery: AMQPDelivery) {
        self.init(body: delivery.body, properties: delivery.properties)
    }

    /// How lists and messages name the job: its id, or a stand-in when it has none.
    public var name: String { id.map { "job \($0)" } ?? "a job without an id" }

    private static func text(_ value: AMQPFieldValue?) -> String? {
        switch value {
        case .string(let text)?: text
        case .bytes(let bytes)?: String(decoding: bytes, as: UTF8.self)
        default: nil
        }
    }
}
