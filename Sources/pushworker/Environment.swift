import Foundation

/// Every option can also come from `PUSHWORKER_<OPTION_IN_UPPER_SNAKE_CASE>`; the command line wins.
enum Env {
    static func variableName(_ option: String) -> String {
        "PUSHWORKER_" + option.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    static subscript(option: String) -> String? {
        guard let value = ProcessInfo.processInfo.environment[variableName(option)], !value.isEmpty else { return nil }
        return value
    }

    static func or(_ value: String?, _ option: String) -> String? { value ?? self[option] }

    static func int(_ option: String, default fallback: Int) -> Int {
        self[option].flatMap(Int.init) ?? fallback
    }
}
