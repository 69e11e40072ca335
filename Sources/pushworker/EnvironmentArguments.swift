import ArgumentParser
import PushCore

/// Makes every option of the chosen subcommand readable from `PUSHWORKER_<OPTION>`: before
/// parsing, each such variable whose option the subcommand has and the command line lacks is
/// appended as `--option value` (or `--flag` for flags set to 1/true/yes). The option list comes
/// from the parser's own description of the command (the JSON of `--experimental-dump-help`), so
/// new options are covered without extra code.
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
        var extra = [String]()
        for (name, takesValue) in options(of: command) {
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

    /// Each long option and flag of `command`: its name, and whether it takes a value.
    static func options(of command: any ParsableCommand.Type) -> [(String, Bool)] {
        guard case let .object(tool)? = try? JSONValue.parse(Array(command._dumpHelp().utf8)),
              case let .object(info)? = tool["command"], case let .array(arguments)? = info["arguments"] else { return [] }
        var found = [(String, Bool)]()
        for case let .object(argument) in arguments {
            guard case let .string(kind)? = argument["kind"], kind == "option" || kind == "flag",
                  case let .array(names)? = argument["names"] else { continue }
            for case let .object(name) in names {
                guard case .string("long")? = name["kind"], case let .string(long)? = name["name"],
                      long != "help", long != "version", !found.contains(where: { $0.0 == long }) else { continue }
                found.append((long, kind == "option"))
            }
        }
        return found
    }
}
