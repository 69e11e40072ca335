import Glibc
import Synchronization

/// Whether a loop still turns, for the liveness probe (`/livez`): the loop says when it goes to
/// wait (poll, sleep) and when it runs again; a loop that has been running, without coming back to
/// its wait, for longer than the probe's limit is stuck (a deadlock, a blocking call that never
/// returns). Waiting, however long, is not stuck: an idle worker is alive; nor is a loop that has
/// not started or has ended (its object may outlive its thread, as a pool closed and still
/// referenced does). Two relaxed atomic stores and a clock read per turn.
public final class LoopHeartbeat: Sendable {
    public let name: String
    /// Milliseconds on the monotonic clock since the loop last left its wait; 0 while it waits, before
    /// it starts and after it ends.
    private let runningSince = Atomic<Int64>(0)

    private struct Entry: Sendable {
        weak let heartbeat: LoopHeartbeat?
    }
    private static let registry = Mutex<[Entry]>([])

    public init(name: String) {
        self.name = name
        Self.registry.withLock { entries in
            entries.removeAll { $0.heartbeat == nil }
            entries.append(Entry(heartbeat: self))
        }
    }

    /// The loop is about to wait (for work, a socket, a timer).
    public func waiting() {
        runningSince.store(0, ordering: .relaxed)
    }

    /// The loop has ended: nothing of it can be stuck any more.
    public func stopped() {
        runningSince.store(0, ordering: .relaxed)
    }

    /// The loop runs (it started, its wait ended, or it ticks).
    public func running() {
        runningSince.store(Self.nowMilliseconds(), ordering: .relaxed)
    }

    /// How long it has been running without waiting, if it is running.
    public func running(at now: Int64) -> Int64? {
        let since = runningSince.load(ordering: .relaxed)
        return since == 0 ? nil : max(0, now - since)
    }

    /// Every live loop running without a wait for longer than `limit`: name and milliseconds.
    public static func stuck(longerThan limit: Duration) -> [(name: String, milliseconds: Int64)] {
        let now = nowMilliseconds()
        let limitMilliseconds = limit.components.seconds * 1000 + limit.components.attoseconds / 1_000_000_000_000_000
        return registry.withLock { $0.compactMap(\.heartbeat) }.compactMap { heartbeat in
            guard let running = heartbeat.running(at: now), running > limitMilliseconds else { return nil }
            return (heartbeat.name, running)
        }
    }

    static func nowMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        // Never 0 (the "waiting" mark): the monotonic clock starts near boot, so add 1.
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000 + 1
    }
}
