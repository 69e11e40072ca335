import ArgumentParser

struct SandboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sandbox", abstract: "Run the local APNs simulator.")
    func run() async throws {}
}
