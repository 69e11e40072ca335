import ArgumentParser
import Logging
import PushCore
import Redis

struct GroupsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "groups",
        abstract: "Manage device groups: Redis sets <prefix><app>:<group> (applications may also SADD/SREM them directly).",
        subcommands: [Add.self, Remove.self, List.self])

    struct Target: ParsableArguments {
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "Redis key prefix of group sets. [env PUSHWORKER_GROUP_KEY_PREFIX]")
        var groupKeyPrefix: String = Env["group-key-prefix"] ?? "group:"
        @Argument(help: "The app (the job's \"app\").") var app: String
        @Argument(help: "The group name.") var group: String

        var key: String { "\(groupKeyPrefix)\(app):\(group)" }

        func client() throws -> RedisClient {
            RedisClient(configuration: try connection.redisConfiguration(), logger: Logger(label: "pushworker.groups"))
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add device tokens to a group.")
        @OptionGroup var target: Target
        @Argument(help: "Device tokens (hex, or 44-character Base64), stored as given: events name them that way.") var tokens: [String]

        func run() async throws {
            let valid = try GroupsCommand.validate(tokens).map(\.given)
            let added = try await target.client().setAdd(key: target.key, members: valid)
            print("\(added) added, \(valid.count - added) already in \(target.key)")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove device tokens from a group.")
        @OptionGroup var target: Target
        @Argument(help: "Device tokens (hex, or 44-character Base64); the lowercase hex spelling is removed too.") var tokens: [String]

        func run() async throws {
            var seen = Set<String>()
            let spellings = try GroupsCommand.validate(tokens).flatMap { [$0.given, $0.identity] }.filter { seen.insert($0).inserted }
            let removed = try await target.client().setRemove(key: target.key, members: spellings)
            print("\(removed) removed from \(target.key)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a group's tokens, one per line (SSCAN: safe on huge sets).")
        @OptionGroup var target: Target

        func run() async throws {
            let client = try target.client()
            var cursor = "0"
            var seen = Set<String>()
            repeat {
                let page = try await client.scanSetPage(key: target.key, cursor: cursor, count: 1000)
                cursor = page.cursor
                for member in page.members where seen.insert(member).inserted { print(member) }
            } while cursor != "0"
        }
    }

    static func validate(_ tokens: [String]) throws -> [DeviceToken] {
        guard !tokens.isEmpty else { throw ValidationError("give at least one device token") }
        return try tokens.enumerated().map { index, text in
            do { return try DeviceToken(validating: text) } catch {
                throw ValidationError("token \(index + 1): \(error)")
            }
        }
    }
}
