/// A point of `ContinuousClock`, kept as the time since a fixed origin. The standard library's
/// `ContinuousClock.Instant` is not frozen, so a struct or enum that holds one gets its layout at
/// run time and each copy of it goes through the runtime's value witnesses; state that is copied
/// per request or per job (the HTTP/2 connection's and pool's, the AMQP phase) holds this instead
/// (measured: docs/evidence/code-measurements.md#stored-instants).
public struct StoredInstant: Comparable, Sendable {
    /// Any fixed instant does: only differences are kept.
    @usableFromInline static let origin = ContinuousClock.now
    @usableFromInline let sinceOrigin: Duration

    @inlinable
    public init(_ instant: ContinuousClock.Instant) {
        sinceOrigin = Self.origin.duration(to: instant)
    }

    @inlinable
    public var instant: ContinuousClock.Instant { Self.origin.advanced(by: sinceOrigin) }

    @inlinable
    public static func < (earlier: StoredInstant, later: StoredInstant) -> Bool {
        earlier.sinceOrigin < later.sinceOrigin
    }
}
