import APNs
import ArgumentParser
import BroadcastChannels
import Foundation
import Logging
import Redis
import WorkerConfigurationFile

/// `pushworker channels`: an APNs app's Live Activity broadcast channels, made and deleted at APNs'
/// channel-management host and remembered (label, end, storage policy) in Redis.
struct ChannelsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "channels",
        abstract: "Manage an APNs app's Live Activity broadcast channels (iOS 18+): one broadcast job reaches every activity subscribed to a channel.",
        discussion: "Works over the app's channel-management host (api-manage-broadcast.push.apple.com:2196, or .sandbox…:2195 in development; broadcast_management_url replaces it) with the app's credentials from the configuration file, and keeps each channel's label, end and storage policy in Redis (pushworker:channels:<app>). Apple allows 10,000 channels per app and environment.",
        subcommands: [Create.self, List.self, Show.self, Delete.self, Prune.self])

    struct Target: ParsableArguments {
        @Argument(help: "The app, as named in the configuration file's apps: (an APNs app with a topic).") var app: String
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var worker: WorkerOptions
        @OptionGroup var logging: LoggingOptions
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a channel and print its id.")
        @OptionGroup var target: Target
        @Option(name: .customLong("storage-policy"), help: "0: APNs keeps nothing for offline devices (broadcasts then carry apns-expiration 0); 1: it keeps the latest message.")
        var storagePolicy: Int = 0
        @Option(help: "Free text for people: the match, the order (at most \(ChannelRecord.maxLabelBytes) bytes).") var label: String?
        @Option(name: .customLong("ends-at"), help: "When what it broadcasts ends (RFC 3339, e.g. 2026-12-24T18:00:00Z, or Unix seconds): channels prune --ended deletes it after.")
        var endsAt: String?

        func validate() throws {
            guard APNsChannelStoragePolicy(rawValue: storagePolicy) != nil else { throw ValidationError("--storage-policy must be 0 or 1, got \(storagePolicy)") }
            if let label, label.utf8.count > ChannelRecord.maxLabelBytes {
                throw ValidationError("--label is \(label.utf8.count) bytes; at most \(ChannelRecord.maxLabelBytes)")
            }
            if let endsAt, ChannelsCommand.milliseconds(endsAt) == nil {
                throw ValidationError("--ends-at must be an RFC 3339 time (2026-12-24T18:00:00Z) or Unix seconds, got \(endsAt)")
            }
        }

        func run() async throws {
            try await ChannelSession.with(target) { session in
                let policy = APNsChannelStoragePolicy(rawValue: storagePolicy) ?? .noStorage
                let id = try await session.apns { try await session.manager.create(storagePolicy: policy) }
                let record = ChannelRecord(id: id, storagePolicy: policy.rawValue, createdAt: ChannelsCommand.now(), label: label,
                                           endsAt: endsAt.flatMap(ChannelsCommand.milliseconds))
                do {
                    try await session.registry.save(record, app: session.app)
                } catch {
                    printError("channel \(id) was created at APNs but not recorded in Redis (\(error)); record it with: pushworker channels show \(session.app) \(id)")
                    print(id)
                    throw ExitCode.failure
                }
                print(id)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the app's channels: APNs' list, with what Redis remembers of each, and the count against Apple's 10,000.")
        @OptionGroup var target: Target

        func run() async throws {
            try await ChannelSession.with(target) { session in
                let ids = try await session.apns { try await session.manager.list() }
                let (records, unreadable) = try await session.registry.all(app: session.app)
                let byID = Dictionary(records.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
                for id in ids { print(ChannelsCommand.line(id: id, record: byID[id])) }
                let atAPNs = Set(ids)
                let stale = records.filter { !atAPNs.contains($0.id) }
                print("\(ids.count) of \(APNsChannelManager.channelLimit) channels (app \(session.app), \(session.environment))")
                if let warning = ChannelRegistry.capWarning(count: ids.count, limit: APNsChannelManager.channelLimit) { printError("warning: \(warning)") }
                if !stale.isEmpty { printError("note: \(stale.count) channel(s) in Redis are gone at APNs: \(stale.map(\.id).joined(separator: ", "))") }
                if !unreadable.isEmpty { printError("warning: Redis holds values that are not channel records for: \(unreadable.joined(separator: ", "))") }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one channel: its storage policy at APNs and what Redis remembers (recording it if Redis did not know it).")
        @OptionGroup var target: Target
        @Argument(help: "The channel id (base64).") var id: String

        func validate() throws {
            guard APNsChannelManager.isChannelID(id) else { throw ValidationError("\(id) is not a channel id (base64, as channels create printed it)") }
        }

        func run() async throws {
            try await ChannelSession.with(target) { session in
                let policy = try await session.apns { try await session.manager.read(id) }
                var record = try await session.registry.record(id, app: session.app)
                    ?? ChannelRecord(id: id, storagePolicy: policy.rawValue, createdAt: ChannelsCommand.now())
                if record.storagePolicy != policy.rawValue { record.storagePolicy = policy.rawValue }
                try await session.registry.save(record, app: session.app)
                print(ChannelsCommand.line(id: id, record: record))
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a channel at APNs and from Redis: activities subscribed to it get no further broadcasts.")
        @OptionGroup var target: Target
        @Argument(help: "The channel id (base64).") var id: String
        @Flag(help: "Do not ask.") var yes = false

        func validate() throws {
            guard APNsChannelManager.isChannelID(id) else { throw ValidationError("\(id) is not a channel id (base64, as channels create printed it)") }
        }

        func run() async throws {
            guard yes || ChannelsCommand.confirm("Delete channel \(id) of app \(target.app)? Its activities get no further broadcasts. [y/N] ") else {
                printError("not deleted (give --yes to skip the question)")
                throw ExitCode.failure
            }
            try await ChannelSession.with(target) { session in
                do throws(APNsChannelError) {
                    try await session.manager.delete(id)
                } catch let error where error.reason == "ChannelNotRegistered" {
                    printError("note: APNs has no channel \(id) (already deleted); removing it from Redis")
                } catch {
                    printError("APNs: \(error)")
                    throw ExitCode.failure
                }
                try await session.registry.remove(id, app: session.app)
                print("deleted \(id)")
            }
        }
    }

    struct Prune: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete the channels whose --ends-at has passed.")
        @OptionGroup var target: Target
        @Flag(help: "Delete the channels whose end (--ends-at at creation) has passed. Required: nothing else is pruned.") var ended = false

        func validate() throws {
            guard ended else { throw ValidationError("give --ended: prune deletes the channels whose end has passed") }
        }

        func run() async throws {
            try await ChannelSession.with(target) { session in
                let now = ChannelsCommand.now()
                let (records, _) = try await session.registry.all(app: session.app)
                var deleted = 0
                for record in records where record.hasEnded(now: now) {
                    do throws(APNsChannelError) {
                        try await session.manager.delete(record.id)
                    } catch let error where error.reason == "ChannelNotRegistered" {
                        // Gone at APNs already: only Redis still had it.
                    } catch {
                        printError("not deleted \(record.id): \(error)")
                        continue
                    }
                    try await session.registry.remove(record.id, app: session.app)
                    print("deleted \(record.id)\(record.label.map { " (\($0))" } ?? "")")
                    deleted += 1
                }
                print("\(deleted) ended channel(s) deleted")
            }
        }
    }

    /// `id  policy=N  created=…  label=…  ends=…  last_broadcast=…`
    static func line(id: String, record: ChannelRecord?) -> String {
        guard let record else { return "\(id)  (not in Redis: created elsewhere; channels show records it)" }
        var parts = [id, "storage_policy=\(record.storagePolicy)", "created=\(time(record.createdAt))"]
        if let label = record.label { parts.append("label=\(label.debugDescription)") }
        if let endsAt = record.endsAt { parts.append("ends=\(time(endsAt))") }
        if let last = record.lastBroadcastAt { parts.append("last_broadcast=\(time(last))") }
        return parts.joined(separator: "  ")
    }

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    static func time(_ milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    /// RFC 3339 or Unix seconds, as milliseconds since 1970.
    static func milliseconds(_ text: String) -> Int64? {
        if let seconds = Int64(text), seconds > 0, seconds < 100_000_000_000 { return seconds * 1000 }
        guard let date = ISO8601DateFormatter().date(from: text) else { return nil }
        return Int64(date.timeIntervalSince1970 * 1000)
    }

    static func confirm(_ question: String) -> Bool {
        writeStandardError(question)
        guard let answer = readLine() else { return false }
        return answer.lowercased() == "y" || answer.lowercased() == "yes"
    }
}

/// One command's way to the app: its channel-management client and the Redis registry.
struct ChannelSession {
    let app: String
    let environment: String
    let manager: APNsChannelManager
    let registry: ChannelRegistry

    init(_ target: ChannelsCommand.Target) throws {
        guard let path = target.worker.configFile else {
            throw ValidationError("give the configuration file (--config FILE or PUSHWORKER_CONFIG): the app's credentials are there")
        }
        let overrides = try target.worker.settings(connection: target.connection, logging: target.logging)
        let loaded: LoadedConfiguration
        do {
            loaded = try ConfigurationLoader.load(try ConfigurationFileReader.read(path: path), overrides: overrides, environment: Env.all)
        } catch {
            throw ValidationError(error.description)
        }
        guard let apns = loaded.worker[apns: target.app] else {
            let known = loaded.worker.apnsApps.keys.sorted().joined(separator: ", ")
            throw ValidationError("app \(target.app): no APNs app of that name in \(path) (its APNs apps: \(known.isEmpty ? "none" : known)); broadcast channels are APNs'")
        }
        let logger = LoggingOptions.makeLogger(label: "pushworker", level: loaded.settings.effectiveLogLevel, format: try target.logging.format())
        do {
            manager = try APNsChannelManager(configuration: apns, logger: logger)
        } catch {
            throw ValidationError("app \(target.app): \(error.message)")
        }
        app = target.app
        let endpoint = (try? apns.channelManagementEndpoint()).map { "\($0.host):\($0.port)" } ?? "?"
        environment = apns.broadcastManagementURL == nil ? "\(apns.environment.rawValue), \(endpoint)" : endpoint
        registry = ChannelRegistry(redis: RedisClient(configuration: loaded.worker.redis, logger: logger))
    }

    /// Runs `body` with a session, and closes its connection whatever happens.
    static func with(_ target: ChannelsCommand.Target, _ body: (ChannelSession) async throws -> Void) async throws {
        let session = try ChannelSession(target)
        do {
            try await body(session)
        } catch {
            await session.manager.shutdown()
            throw error
        }
        await session.manager.shutdown()
    }

    /// Runs an APNs request, turning its failure into a one-line error.
    func apns<Value>(_ request: () async throws -> Value) async throws -> Value {
        // A refusal at run time is no usage mistake: the message alone, and a failing exit status.
        do { return try await request() } catch let error as APNsChannelError {
            printError("APNs: \(error)")
            throw ExitCode.failure
        }
    }
}
