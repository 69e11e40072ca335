import APNs
import NIOConcurrencyHelpers

/// The apps a worker serves, replaceable while it runs (SIGHUP). A job finds its app's client
/// through `client(for:)`; a reload puts new clients in for new jobs, while the clients it replaces
/// stay usable for the jobs that began before it, and are shut down once those jobs have all
/// settled (`retired`). Each job is counted in the generation it started in (`enter`, `leave`).
final class AppRoster: Sendable {
    /// One generation's apps: immutable, read per job with one lock and one retain.
    final class Apps: Sendable {
        /// One per reload; UInt64 never nears its end.
        let generation: UInt64
        let clients: AppTable<APNsClient>
        let breakers: AppTable<ConfigurationBreaker>

        init(generation: UInt64, clients: AppTable<APNsClient>, breakers: AppTable<ConfigurationBreaker>) {
            self.generation = generation
            self.clients = clients
            self.breakers = breakers
        }
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

    init(clients: [String: APNsClient]) {
        let table = AppTable(clients)
        state = NIOLockedValueBox(State(current: Apps(generation: 0, clients: table, breakers: table.mapValues { _ in ConfigurationBreaker() })))
    }

    var current: Apps { state.withLockedValue { $0.current } }

    /// The app's client for a job: the current one, else (the app was taken out or changed by a
    /// reload after the job began) the one the job began with.
    func client(for app: String) -> APNsClient? {
        state.withLockedValue { state in
            state.current.clients[app] ?? state.replaced.lazy.compactMap { $0.clients[app] }.first
        }
    }

    func breaker(for app: String) -> ConfigurationBreaker? {
        state.withLockedValue { state in
            state.current.breakers[app] ?? state.replaced.lazy.compactMap { $0.breakers[app] }.first
        }
    }

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

    /// Puts `clients` in for new jobs. `kept` apps keep their client and breaker (their settings
    /// did not change: no new connections, no new provider token). Returns the apps replaced, for
    /// `retire`.
    func replace(with clients: [String: APNsClient], keeping kept: Set<String>) -> Apps {
        state.withLockedValue { state in
            let old = state.current
            var merged = clients
            var breakers: [String: ConfigurationBreaker] = [:]
            for app in merged.keys { breakers[app] = ConfigurationBreaker() }
            for app in kept {
                guard let client = old.clients[app], let breaker = old.breakers[app] else { continue }
                merged[app] = client
                breakers[app] = breaker
            }
            if state.currentJobs > 0 { state.earlierJobs[old.generation] = state.currentJobs }
            state.currentJobs = 0
            state.current = Apps(generation: old.generation &+ 1, clients: AppTable(merged), breakers: AppTable(breakers))
            state.replaced.insert(old, at: 0)
            return old
        }
    }

    /// Returns, once no job that began before `old` was replaced is in flight, the clients of `old`
    /// that no later generation uses: they can be shut down.
    func retire(_ old: Apps) async -> [APNsClient] {
        let before = old.generation &+ 1
        await withCheckedContinuation { continuation in
            let due: [CheckedContinuation<Void, Never>] = state.withLockedValue { state in
                state.retiring.append(Retiring(before: before, apps: old, waiter: continuation))
                return Self.takeDue(&state)
            }
            for waiter in due { waiter.resume() }
        }
        let stillUsed = state.withLockedValue { state in
            Set(([state.current] + state.replaced).flatMap { $0.clients.allValues.map(ObjectIdentifier.init) })
        }
        return old.clients.allValues.filter { !stillUsed.contains(ObjectIdentifier($0)) }
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
