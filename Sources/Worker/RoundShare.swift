/// What a round of many devices holds of the in-flight budget while its answers come in: at most
/// one unit per device still waiting, so that a round whose last answers are slow (a push service
/// that takes its time, a request near its timeout) gives back what its answered devices held
/// instead of keeping it until its slowest answer. The share is given back in steps of a sixteenth
/// (one unit for small rounds), so a 1,000-device chunk takes the budget's lock about 16 times,
/// not 1,000. Whatever the order of answers, the releases add up to the share exactly.
struct RoundShare: Sendable, Equatable {
    /// Units of the budget still held.
    private(set) var held: Int
    /// Devices whose answer has not come.
    private(set) var waiting: Int
    let step: Int

    /// - Parameters: share: what the round acquired (`DevicesInFlight`: at most the budget's
    ///   limit, so possibly less than `devices`).
    init(share: Int, devices: Int) {
        held = max(0, share)
        waiting = max(0, devices)
        step = max(1, held / 16)
    }

    /// One more answer: the units to give back now (often 0).
    mutating func answered() -> Int {
        guard waiting > 0 else { return 0 }
        waiting -= 1
        let target = min(waiting, held)
        guard held - target >= step || waiting == 0 else { return 0 }
        defer { held = target }
        return held - target
    }
}
