/// The time the gateway's token buckets are driven by: how long since the gateway started.
public struct GatewayClock: Sendable {
    public let now: @Sendable () -> Duration

    /// The monotonic clock, from the moment this is made.
    public static func continuous() -> GatewayClock {
        let clock = ContinuousClock()
        let start = clock.now
        return GatewayClock { clock.now - start }
    }

    /// Always `instant`: no bucket refills, so a test decides by counts alone.
    public static func frozen(at instant: Duration = .zero) -> GatewayClock {
        GatewayClock { instant }
    }

    private init(now: @escaping @Sendable () -> Duration) {
        self.now = now
    }
}
