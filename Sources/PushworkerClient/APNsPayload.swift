import PushCore

/// An APNs payload: the `aps` dictionary with the keys of Apple's "Generating a remote
/// notification", spelled as Apple spells them, and your own keys beside it.
public struct APNsPayload: Sendable, Hashable {
    public var alert: Alert?
    /// 0 removes the badge.
    public var badge: Int?
    public var sound: Sound?
    /// `content-available: 1`: a background update (with nothing else in `aps`, the worker sends
    /// it as push type background).
    public var contentAvailable: Bool
    /// `mutable-content: 1`: the app's notification service extension may change it.
    public var mutableContent: Bool
    public var category: String?
    public var threadID: String?
    public var targetContentID: String?
    public var interruptionLevel: InterruptionLevel?
    /// 0…1: which notification the system features in a summary.
    public var relevanceScore: Double?
    /// Matched against the app's Focus filters.
    public var filterCriteria: String?
    /// Further `aps` keys (a Live Activity's `timestamp`, `event`, `content-state` …), written
    /// after the ones above; they may not repeat one of them.
    public var additionalAPS: [String: JSONValue]
    /// Your own top-level keys beside `aps` (any JSON); `aps` itself is not one of them.
    public var custom: [String: JSONValue]

    public init(alert: Alert? = nil, badge: Int? = nil, sound: Sound? = nil, contentAvailable: Bool = false,
                mutableContent: Bool = false, category: String? = nil, threadID: String? = nil, targetContentID: String? = nil,
                interruptionLevel: InterruptionLevel? = nil, relevanceScore: Double? = nil, filterCriteria: String? = nil,
                additionalAPS: [String: JSONValue] = [:], custom: [String: JSONValue] = [:]) {
        self.alert = alert
        self.badge = badge
        self.sound = sound
        self.contentAvailable = contentAvailable
        self.mutableContent = mutableContent
        self.category = category
        self.threadID = threadID
        self.targetContentID = targetContentID
        self.interruptionLevel = interruptionLevel
        self.relevanceScore = relevanceScore
        self.filterCriteria = filterCriteria
        self.additionalAPS = additionalAPS
        self.custom = custom
    }

    /// The `aps` keys this builder writes itself.
    static let apsKeys: Set<String> = [
        "alert", "badge", "sound", "content-available", "mutable-content", "category", "thread-id", "target-content-id",
        "interruption-level", "relevance-score", "filter-criteria",
    ]

    func jsonObject() throws(PushworkerJobError) -> JSONObjectWriter {
        if custom["aps"] != nil {
            throw PushworkerJobError(field: "payload.aps", "is written from the payload's fields; give custom keys other than aps (or the whole payload as the job's rawPayload)")
        }
        for key in additionalAPS.keys.sorted() where Self.apsKeys.contains(key) {
            throw PushworkerJobError(field: "payload.aps.\(key)", "has its own field in APNsPayload; set that instead of additionalAPS")
        }
        var aps = JSONObjectWriter()
        if let alert { aps.member("alert", alert.json) }
        if let badge { aps.member("badge", badge) }
        if let sound { aps.member("sound", sound.json) }
        // Apple documents 1 for both flags (and the worker's background detection reads the key).
        if contentAvailable { aps.member("content-available", 1) }
        if mutableContent { aps.member("mutable-content", 1) }
        if let category { aps.member("category", category) }
        if let threadID { aps.member("thread-id", threadID) }
        if let targetContentID { aps.member("target-content-id", targetContentID) }
        if let interruptionLevel { aps.member("interruption-level", interruptionLevel.rawValue) }
        if let relevanceScore { aps.member("relevance-score", relevanceScore) }
        if let filterCriteria { aps.member("filter-criteria", filterCriteria) }
        aps.members(additionalAPS)
        var payload = JSONObjectWriter()
        payload.member("aps", object: aps)
        payload.members(custom)
        return payload
    }
}
