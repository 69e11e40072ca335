import ArgumentParser
import Foundation
import WorkerConfigurationFile

struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Work with the configuration file.",
        subcommands: [Check.self])

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a configuration file and print the configuration in effect (secrets as ***).",
            discussion: "Loads every app's key or certificate as the worker would. Exits non-zero with one line per error (file:line: field: problem); warnings (a certificate ending within 30 days, a key file its group or other users can read) are printed and exit 0. Worker options given here, or their PUSHWORKER_ variables, override the file as they do for run.")

        @Argument(help: "The file (default: --config or PUSHWORKER_CONFIG).") var file: String?
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var worker: WorkerOptions
        @OptionGroup var logging: LoggingOptions

        func run() async throws {
            guard let path = file ?? worker.configFile else {
                throw ValidationError("give the file: pushworker config check FILE (or --config FILE, or PUSHWORKER_CONFIG)")
            }
            let overrides = try worker.settings(connection: connection, logging: logging)
            do {
                let loaded = try ConfigurationLoader.load(try ConfigurationFileReader.read(path: path), overrides: overrides, environment: Env.all)
                print(EffectiveConfigurationText.render(loaded), terminator: "")
                for warning in loaded.warnings { FileHandle.standardError.write(Data((warning.description + "\n").utf8)) }
            } catch {
                FileHandle.standardError.write(Data((error.description + "\n").utf8))
                throw ExitCode.failure
            }
        }
    }
}
