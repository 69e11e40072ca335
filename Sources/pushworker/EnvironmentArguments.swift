import ArgumentParser

/// Makes every option of the chosen subcommand readable from `PUSHWORKER_<OPTION>`: before
/// parsing, each such variable whose option the subcommand has and the command line lacks is
/// appended as `--option value` (or `--flag` for flags set to 1/true/yes). The option list comes
/// from the command's own help, so new options are covered without extra code.
enum EnvironmentArguments {
    static func apply(to arguments: [String], root: any ParsableCommand.Type, environment: [String: String]) -> [String] {
        var command: any ParsableCommand.Type = root
        var depth = 0
        // Walk the subcommand path (leading words that name subcommands).
        while depth < arguments.count,
              let next = command.configuration.subcommands.first(where: { $0._commandName == arguments[depth] }) {
            command = next
            depth += 1
        }
        let help = root.helpMessage(for: command, columns: 400)
        var extra = [String]()
        for (name, takesValue) in options(inHelp: help) {
            let variable = Env.variableName(name)
            guard let value = environment[variable], !value.isEmpty,
                  !arguments.contains("--\(name)"), !arguments.contains(where: { $0.hasPrefix("--\(name)=") }) else { continue }
            if takesValue {
                extra.append("--\(name)=\(value)")
            } else if ["1", "true", "yes"].contains(value.lowercased()) {
                extra.append("--\(name)")
            }
        }
        guard !extra.isEmpty else { return arguments }
        // Options go before a `--` terminator or positional tail; putting them right after the
        // subcommand path keeps positionals (groups add APP GROUP TOKEN…) where they were.
        return Array(arguments[..<depth]) + extra + Array(arguments[depth...])
    }

    static func options(inHelp help: String) -> [(String, Bool)] {
        var found = [(String, Bool)]()
        for line in help.split(separator: "\n") {
            let trimmed = line.drop(while: { $0 == " " })
            guard trimmed.hasPrefix("-") else { continue }
            // "--amqp-url <amqp-url>" or "-h, --help" or "--log-notifications"
            for part in trimmed.split(separator: ",") {
                let words = part.split(separator: " ")
                guard let first = words.first, first.hasPrefix("--") else { continue }
                let name = String(first.dropFirst(2))
                guard name != "help", name != "version", !found.contains(where: { $0.0 == name }) else { continue }
                found.append((name, words.count > 1 && words[1].hasPrefix("<")))
            }
        }
        return found
    }
}
