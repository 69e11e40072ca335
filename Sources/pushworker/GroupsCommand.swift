import ArgumentParser
import Operations
import PushCore
import Redis

struct GroupsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "groups",
        abstract: "Manage device groups: Redis sets <prefix><app>:<group> (applications may also SADD/SREM them directly).",
        subcommands: [Add.self, Remove.self, List.self, Import.self, Count.self, Delete.self])

    struct Target: ParsableArguments {
        @OptionGroup var address: GroupAddress
        @Option(help: "The app's platform, which says what a device is: apns (a hex token), fcm (a registration token) or webpush (a subscription's JSON or compact form <endpoint>#p256dh=…&auth=…).")
        var platform: String = "apns"

        var key: String { address.key }

        func client() throws -> RedisClient { try address.client() }

        func validate() throws { _ = try rules }

        var rules: any PlatformJobRules {
            get throws { do { return try DevicePlatform(option: platform).rules } catch { throw ValidationError(error.description) } }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add device tokens to a group.")
        @OptionGroup var target: Target
        @Argument(help: "Devices (APNs: hex or 44-character Base64 tokens; Web Push: subscriptions), stored as given: events name them that way.") var tokens: [String]

        func run() async throws {
            let valid = try GroupsCommand.validate(tokens, target: target).map(\.given)
            let added = try await target.client().setAdd(key: target.key, members: valid)
            print("\(added) added, \(valid.count - added) already in \(target.key)")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove device tokens from a group.")
        @OptionGroup var target: Target
        @Argument(help: "Devices as added (APNs: the lowercase hex spelling is removed too).") var tokens: [String]

        func run() async throws {
            var seen = Set<String>()
            let devices = try GroupsCommand.validate(tokens, target: target)
            // An APNs token's identity is another spelling of it; a subscription's is its endpoint, no member.
            let spellings = devices.flatMap { target.platform == "apns" ? [$0.given, $0.identity] : [$0.given] }
                .filter { seen.insert($0).inserted }
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

    static func validate(_ tokens: [String], target: Target) throws -> [DeviceToken] {
        let rules = try target.rules
        guard !tokens.isEmpty else { throw ValidationError("give at least one device") }
        return try tokens.enumerated().map { index, text in
            do { return try rules.device(from: .string(text)) } catch {
                throw ValidationError("device \(index + 1): \(error)")
            }
        }
    }
}
