/// The push services (origins) that accepted this app's messages lately, and when last. A service
/// that has delivered for the app and now cannot be reached, or answers 5xx, is having an outage:
/// its devices wait it out without using attempts (`DeliveryOutcome.serviceDown`). One that never
/// delivered has no such credit, so a dead or hostile endpoint fails its devices along the ladder.
///
/// Bounded: at most `capacity` origins; when full, the eighth that delivered longest ago is
/// forgotten (a scan only then, not per message). A value tests drive with their own instants.
public struct DeliveredServices: Sendable {
    /// A service that delivered within this long counts as one that works.
    public static let memory: Duration = .seconds(24 * 3600)
    public static let capacity = 4096

    private var lastDelivery: [WebPushEndpointOrigin: ContinuousClock.Instant] = [:]

    public init() {}

    public var count: Int { lastDelivery.count }

    public mutating func delivered(_ origin: WebPushEndpointOrigin, at now: ContinuousClock.Instant) {
        if lastDelivery.updateValue(now, forKey: origin) == nil, lastDelivery.count > Self.capacity {
            let oldest = lastDelivery.sorted { $0.value < $1.value }.prefix(Self.capacity / 8).map(\.key)
            for origin in oldest { lastDelivery[origin] = nil }
        }
    }

    public func hasDelivered(_ origin: WebPushEndpointOrigin, at now: ContinuousClock.Instant) -> Bool {
        guard let last = lastDelivery[origin] else { return false }
        return now - last <= Self.memory
    }
}
