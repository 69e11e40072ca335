import NIOConcurrencyHelpers
import PushCore
import PushTransport

/// The apps a worker serves, replaceable while it runs (SIGHUP). A job finds its app's transport
/// through `transport(for:)`; a reload puts new ones in for new jobs, while the ones it replaces
/// stay usable for the jobs that began before it, and are shut down once those jobs have all
/// settled (`retired`). Each job is counted in the generation it started in (`enter`, `leave`).
final class AppRoster: Sendable {
    /// One generation's apps: immutable, read per job with one lock and one retain.
    final class Apps: Sendable {
        /// One per reload; UInt64 never nears its end.
        let generation: UInt64
        let apps: AppTable<ServedApp>

        init(generation: UInt64, apps: AppTable<ServedApp>) {
            self.generation = generation
            self.apps = apps
        }

        var names: [String] { apps.keys }
        var transports: [any PushTransport] { apps.allValues.map(\.transport) }
    }

    private struct Retiring {
        /// Shut down once no job of a generation before this one is in flight.
        let before: UInt64
        let apps: Apps
        let waiter: CheckedContinuation<Void, Never>
    }

    private struct State {
        var current: Apps
        /// Apps that reloads took out, newest first: jobs that started earlier still find them.
        var replaced: [Apps] = []
        /// Jobs in flight of the current generation: a plain count, so that a job's `enter` and
        /// `leave` cost no hashing (they are on the one-token path).
        var currentJobs = 0
        /// Jobs in flight of earlier generations (only generations with jobs are kept).
        var earlierJobs: [UInt64: Int] = [:]
        var retiring: [Retiring] = []

        func jobsBefore(_ generation: UInt64) -> Bool {
            (current.generation < generation && currentJobs > 0)
                || earlierJobs.contains { $0.key < generation && $0.value > 0 }
        }
    }

    private let state: NIOLockedValueBox<State>

    init(apps: [String: ServedApp]) {
        state = NIOLockedValueBox(State(current: Apps(generation: 0, apps: AppTable(apps))))
    }

    var current: Apps { state.withLockedValue { $0.current } }

    /// The app for a job: the current one, else (the app was taken out or changed by a reload
    /// after the job began) the one the job began with.
    func app(_ name: String) -> ServedApp? {
        state.withLockedValue { state in
            state.current.apps[name] ?? state.replaced.lazy.compactMap { $0.apps[name] }.first
        }
    }

    /// The app that sends `job`: the current one while it is of the platform the job was parsed
    /// for, else the one of an earlier generation the job began with (a reload changed its
    /// platform meanwhile: the new app's transport cannot read the job's options). nil when no
    /// generation has such an app.
    func app(for job: PushJob) -> ServedApp? {
        let platform = job.options.platformName
        return state.withLockedValue { state in
            if let app = state.current.apps[job.app], app.rules.platformName == platform { return app }
            return state.replaced.lazy.compactMap { $0.apps[job.app] }.first { $0.rules.platformName == platform }
        }
    }

    func transport(for app: String) -> (any PushTransport)? { self.app(app)?.transport }

    /// Retirements waiting for earlier jobs to settle.
    var retirementsWaiting: Int { state.withLockedValue { $0.retiring.count } }

    /// A job begins: counted in the current generation, which it returns for `leave`.
    func enter() -> UInt64 {
        state.withLockedValue { state in
            state.currentJobs += 1
            return state.current.generation
        }
    }

    func leave(_ generation: UInt64) {
        let due: [CheckedContinuation<Void, Never>] = state.withLockedValue { state in
            guard generation != state.current.generation else {
                state.currentJobs -= 1
                return []
            }
            state.earlierJobs[generation, default: 0] -= 1
            if state.earlierJobs[generation] == 0 { state.earlierJobs[generation] = nil }
            return Self.takeDue(&state)
        }
        for waiter in due { waiter.resume() }
    }

    /// Puts `apps` in for new jobs. `kept` apps keep what they had (their settings did not change:
    /// no new connections, no new provider token, the same breaker). Returns the apps replaced,
    /// for `retire`.
    func replace(with apps: [String: ServedApp], keeping kept: Set<String>) -> Apps {
        state.withLockedValue { state in
            let old = state.current
            var merged = apps
            for app in kept {
                guard let served = old.apps[app] else { continue }
                merged[app] = served
            }
            if state.currentJobs > 0 { state.earlierJobs[old.generation] = state.currentJobs }
            state.currentJobs = 0
            state.current = Apps(generation: old.generation &+ 1, apps: AppTable(merged))
            state.replaced.insert(old, at: 0)
            return old
        }
    }

    /// Returns, once no job that began before `old` was replaced is in flight, the transports of
    /// `old` that no later generation uses: they can be shut down.
    func retire(_ old: Apps) async -> [any PushTransport] {
        let before = old.generation &+ 1
        await withCheckedContinuation { continuation in
            let due: [CheckedContinuation<Void, Never>] = state.withLockedValue { state in
                state.retiring.append(Retiring(before: before, apps: old, waiter: continuation))
                return Self.takeDue(&state)
            }
            for waiter in due { waiter.resume() }
        }
        let stillUsed = state.withLockedValue { state in
            Set(([state.current] + state.replaced).flatMap { $0.transports.map { ObjectIdentifier($0) } })
        }
        return old.transports.filter { !stillUsed.contains(ObjectIdentifier($0)) }
    }

    /// Retirements whose earlier jobs have all settled: their apps leave `replaced`.
    private static func takeDue(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        var due: [CheckedContinuation<Void, Never>] = []
        var waiting: [Retiring] = []
        for retiring in state.retiring {
            if state.jobsBefore(retiring.before) {
                waiting.append(retiring)
            } else {
                due.append(retiring.waiter)
                state.replaced.removeAll { $0 === retiring.apps }
            }
        }
        state.retiring = waiting
        return due
    }
}
