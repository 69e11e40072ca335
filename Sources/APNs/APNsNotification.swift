import APNsCore
import PushCore

/// One notification for one device, ready to become an HTTP/2 request.
public struct APNsNotification: Sendable {
    /// What goes into the request's headers besides the apns-id: the part a job's requests share.
    /// `APNsRequestBuilder` makes the shared headers from these fields alone and `APNsHeaderCache`
    /// keys on them, so a field that changes a header belongs here and reaches both.
    public struct HeaderFields: Sendable, Hashable {
        // The synthesized `==` compares in this order: the cheap fields first.
        public var pushType: APNsPushType
        public var priority: Int
        public var expiration: Int
        public var topic: String?
        public var collapseID: String?
    }

    public var token: DeviceToken
    public var headerFields: HeaderFields
    public var apnsID: String?
    public var payload: [UInt8]

    public init(token: DeviceToken, topic: String?, pushType: APNsPushType, priority: Int, expiration: Int,
                collapseID: String? = nil, apnsID: String? = nil, payload: [UInt8]) {
        self.token = token
        headerFields = HeaderFields(pushType: pushType, priority: priority, expiration: expiration, topic: topic,
                                    collapseID: collapseID)
        self.apnsID = apnsID
        self.payload = payload
    }
}
