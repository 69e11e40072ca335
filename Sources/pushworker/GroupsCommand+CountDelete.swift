import ArgumentParser
import Redis

extension GroupsCommand {
    struct Count: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print how many devices a group has (SCARD; 0 for a group that does not exist).")
        @OptionGroup var address: GroupAddress

        func run() async throws {
            print(try await address.client().setCardinality(key: address.key))
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a group (UNLINK: Redis frees a large set in the background).",
            discussion: "Asks for --yes, on a terminal as in a script: without it, nothing is deleted and the group's size is shown. Jobs that name a deleted group reach no device of it (their job.completed says the group is missing).")
        @OptionGroup var address: GroupAddress
        @Flag(help: "Really delete.") var yes = false

        func run() async throws {
            let client = try address.client()
            let size = try await client.setCardinality(key: address.key)
            guard yes else {
                printError("\(address.key) has \(size) devices; nothing deleted: add --yes to delete it")
                throw ExitCode.failure
            }
            let reply = try await client.command(["UNLINK", address.key])
            guard case .integer(let removed) = reply else { throw RedisError(.unexpectedReply, "UNLINK \(address.key) answered \(reply)") }
            print(removed == 1 ? "deleted \(address.key) (\(size) devices)" : "\(address.key) does not exist; nothing deleted")
        }
    }
}
