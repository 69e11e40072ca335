import Glibc

/// Every option can also come from `PUSHWORKER_<OPTION_IN_UPPER_SNAKE_CASE>`; the command line wins.
enum Env {
    static func variableName(_ option: String) -> String {
        "PUSHWORKER_" + String(option.uppercased().map { $0 == "-" ? "_" : $0 })
    }

    static subscript(option: String) -> String? {
        guard let value = getenv(variableName(option)).map({ String(cString: $0) }), !value.isEmpty else { return nil }
        return value
    }

    /// Every variable of the process, as `ProcessInfo.environment` gives it, without Foundation.
    static var all: [String: String] {
        var variables = [String: String]()
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                variables[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return variables
    }

    static func or(_ value: String?, _ option: String) -> String? { value ?? self[option] }

    static func int(_ option: String, default fallback: Int) -> Int {
        self[option].flatMap(Int.init) ?? fallback
    }
}
