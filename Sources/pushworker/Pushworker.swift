import ArgumentParser
import Worker

@main
struct Pushworker: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushworker",
        abstract: "Delivers push notifications: RabbitMQ jobs → Redis groups → APNs over HTTP/2 → result events.",
        discussion: "Every option can also be set with an environment variable PUSHWORKER_<OPTION_IN_UPPER_SNAKE_CASE>, e.g. --amqp-url ↔ PUSHWORKER_AMQP_URL. The command line wins.",
        subcommands: [RunCommand.self, ConfigCommand.self, SandboxCommand.self, GroupsCommand.self, ChannelsCommand.self, SendCommand.self, EventsCommand.self, WebPushCommand.self, GatewayCommand.self, QueuesCommand.self, DeadCommand.self]
    )

    static func main() async {
        // Before any thread starts (BrokenPipes says why).
        BrokenPipes.ignoreProcessWide()
        let arguments = EnvironmentArguments.apply(
            to: Array(CommandLine.arguments.dropFirst()), root: Pushworker.self,
            environment: Env.all)
        do {
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
