/// What `--prefetch auto` decides, as a value: the jobs' sizes and the time come in, a new
/// prefetch (or nothing) comes out. Each change restarts the job queue's consumer (basic.qos
/// applies to consumers started after it), and a restart hands the broker a cancel and a consume
/// while deliveries are in flight, so changes are rare on purpose:
/// - only a twofold step changes anything;
/// - a rise waits `riseDwell` after the last change, a fall `fallDwell` (a fall protects memory,
///   a rise only throughput), so a mix of one-device jobs and chunk jobs cannot swing it back and
///   forth every window: at most two rises a minute, and each fall follows a rise or halves again.
/// The first change after start comes at once.
struct PrefetchTuning: Sendable, Equatable {
    /// `basic.qos` counts in 16 bits.
    static let range: ClosedRange<Int> = 10...Int(UInt16.max)
    /// Jobs between two looks at the averages; a look comes sooner once the jobs seen name twice
    /// the budget's devices (8 chunk jobs of 1,000), so a fan-out's chunk jobs are not held a
    /// hundred at a time, with their parsed devices, while the first window fills.
    static let window = 64
    static let riseDwell: Duration = .seconds(30)
    static let fallDwell: Duration = .seconds(5)

    let maxInFlight: Int
    let maxBytesInFlight: Int
    private(set) var current: Int
    /// When the prefetch last changed; nil: never since start.
    private(set) var lastChange: ContinuousClock.Instant?
    private var jobs = 0
    private var devices = 0
    private var bytes = 0

    init(initial: Int, maxInFlight: Int, maxBytesInFlight: Int) {
        self.current = initial
        self.maxInFlight = maxInFlight
        self.maxBytesInFlight = maxBytesInFlight
    }

    /// One job's size; returns the new prefetch when the window's averages ask for a twofold
    /// change and its dwell has passed. `now` is read only then, not per job.
    mutating func observe(devices: Int, bodyBytes: Int, now: @autoclosure () -> ContinuousClock.Instant) -> UInt16? {
        jobs += 1
        self.devices += max(devices, 1)
        bytes += max(bodyBytes, 1)
        guard jobs >= Self.window || self.devices >= 2 * maxInFlight else { return nil }
        let wanted = Self.prefetch(meanDevices: Double(self.devices) / Double(jobs), meanBytes: Double(bytes) / Double(jobs),
                                   maxInFlight: maxInFlight, maxBytesInFlight: maxBytesInFlight)
        jobs = 0
        self.devices = 0
        bytes = 0
        let rises = wanted >= current * 2
        guard rises || wanted * 2 <= current else { return nil }
        let now = now()
        if let lastChange, now < lastChange + (rises ? Self.riseDwell : Self.fallDwell) { return nil }
        current = wanted
        lastChange = now
        return UInt16(wanted)
    }

    /// Enough jobs to fill the notifications-in-flight budget twice over, but no more job bodies
    /// than half of `--max-bytes-in-flight` on average, within `range`.
    static func prefetch(meanDevices: Double, meanBytes: Double, maxInFlight: Int, maxBytesInFlight: Int) -> Int {
        let byDevices = 2 * Double(maxInFlight) / max(meanDevices, 1)
        let byBytes = Double(maxBytesInFlight) / 2 / max(meanBytes, 1)
        return min(max(Int(min(byDevices, byBytes)), range.lowerBound), range.upperBound)
    }
}
