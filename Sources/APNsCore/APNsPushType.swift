/// Apple's `apns-push-type` values, with the topic suffix and payload limit each one implies.
public enum APNsPushType: String, Sendable, CaseIterable, Hashable {
    case alert, background, location, voip, complication, fileprovider, mdm, liveactivity, pushtotalk, widgets, controls

    /// The suffix APNs expects after the bundle ID in `apns-topic` (nil: the bare bundle ID, or for
    /// MDM the topic taken from the push certificate).
    public var topicSuffix: String? {
        switch self {
        case .alert, .background, .mdm: nil
        case .location: ".location-query"
        case .voip: ".voip"
        case .complication: ".complication"
        case .fileprovider: ".pushkit.fileprovider"
        case .liveactivity: ".push-type.liveactivity"
        case .pushtotalk: ".voip-ptt"
        case .widgets: ".push-type.widgets"
        case .controls: ".push-type.controls"
        }
    }

    /// APNs rejects larger bodies with 413 PayloadTooLarge.
    public var maxPayloadBytes: Int { self == .voip ? 5120 : 4096 }

    /// The `apns-topic` for a bundle ID: the suffix is added unless the caller already wrote it.
    public func topic(forBundleID bundleID: String) -> String {
        guard let suffix = topicSuffix, !bundleID.hasSuffix(suffix) else { return bundleID }
        return bundleID + suffix
    }

    /// The bundle ID behind a topic of this push type (the topic without its suffix).
    public func bundleID(fromTopic topic: String) -> String {
        guard let suffix = topicSuffix, topic.hasSuffix(suffix) else { return topic }
        return String(topic.dropLast(suffix.count))
    }
}
