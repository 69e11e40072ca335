import HTTP2
import APNsCore
import PushCore
import NIOConcurrencyHelpers

/// The flattened headers of the notifications sent most recently, keyed by the notification's
/// `HeaderFields` (everything in them but the device and the apns-id, both sent per request) and
/// the authorization: a job to many devices, or many one-device jobs of the same kind, build their
/// header block once instead of once per request.
final class APNsHeaderCache: Sendable {
    struct Key: Sendable {
        var fields: APNsNotification.HeaderFields
        var authorization: String?

        init(_ notification: APNsNotification, authorization: String?) {
            fields = notification.headerFields
            self.authorization = authorization
        }

        /// Whether `notification` sent with `authorization` has this key, compared in place rather
        /// than copied into a key (six retains and releases per request, `ops/count-instructions`).
        func matches(_ notification: APNsNotification, authorization: String?) -> Bool {
            fields == notification.headerFields && self.authorization == authorization
        }
    }

    /// Few entries: lookups are a linear scan, and distinct notifications in flight at once are few.
    static let capacity = 8
    private let entries = NIOLockedValueBox<[(key: Key, block: RequestHeaderBlock)]>([])

    func block(for notification: APNsNotification, authorization: String?,
               build: () throws(APNsRequestProblem) -> RequestHeaderBlock) throws(APNsRequestProblem) -> RequestHeaderBlock {
        let hit = entries.withLockedValue { entries in
            entries.first(where: { $0.key.matches(notification, authorization: authorization) })?.block
        }
        if let hit { return hit }
        let block = try build()
        let key = Key(notification, authorization: authorization)
        entries.withLockedValue { entries in
            if entries.count >= Self.capacity { entries.removeFirst() }
            entries.append((key, block))
        }
        return block
    }
}
