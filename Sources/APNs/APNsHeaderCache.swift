import HTTP2
import APNsCore
import PushCore
import NIOConcurrencyHelpers

/// The flattened headers of the notifications sent most recently, keyed by everything in them
/// but the device and the apns-id (both sent per request): a job to many devices, or many one-device jobs of the same kind, build their
/// header block once instead of once per request.
final class APNsHeaderCache: Sendable {
    struct Key: Hashable, Sendable {
        var authorization: String?
        var topic: String?
        var pushType: APNsPushType
        var priority: Int
        var expiration: Int
        var collapseID: String?

        init(_ notification: APNsNotification, authorization: String?) {
            self.authorization = authorization
            topic = notification.topic
            pushType = notification.pushType
            priority = notification.priority
            expiration = notification.expiration
            collapseID = notification.collapseID
        }
    }

    /// Few entries: lookups are a linear scan, and distinct notifications in flight at once are few.
    static let capacity = 8
    private let entries = NIOLockedValueBox<[(key: Key, block: RequestHeaderBlock)]>([])

    func block(for key: Key, build: () throws(APNsRequestProblem) -> RequestHeaderBlock) throws(APNsRequestProblem) -> RequestHeaderBlock {
        if let hit = entries.withLockedValue({ entries in entries.first(where: { $0.key == key })?.block }) {
            return hit
        }
        let block = try build()
        entries.withLockedValue { entries in
            if entries.count >= Self.capacity { entries.removeFirst() }
            entries.append((key, block))
        }
        return block
    }
}
