/// One problem found in a configuration file, placed so that a person can go and fix it:
/// `pushworker.yaml:14: apps[1].token.key_id: expected 10 characters, got "ABC"`.
public struct ConfigurationFinding: Sendable, Hashable, CustomStringConvertible {
    public enum Severity: Sendable, Hashable { case error, warning }

    public var severity: Severity
    /// The file as it was named (relative paths stay relative: that is what the person typed).
    public var file: String
    /// 1-based; nil when the problem is not at one place (a setting given on the command line).
    public var line: Int?
    /// The field's path in the file: `apps[1].token.key_id`, `worker.prefetch`.
    public var field: String
    public var message: String

    public init(_ severity: Severity = .error, file: String, line: Int?, field: String, message: String) {
        self.severity = severity
        self.file = file
        self.line = line
        self.field = field
        self.message = message
    }

    public var description: String {
        let place = line.map { "\(file):\($0)" } ?? file
        let prefix = severity == .warning ? "warning: " : ""
        return "\(place): \(prefix)\(field): \(message)"
    }
}

/// Every error found at once, so one run of `config check` lists them all.
public struct ConfigurationProblems: Error, Sendable, CustomStringConvertible {
    public var findings: [ConfigurationFinding]

    public init(_ findings: [ConfigurationFinding]) { self.findings = findings }

    public var errors: [ConfigurationFinding] { findings.filter { $0.severity == .error } }
    public var description: String { findings.map(\.description).joined(separator: "\n") }
}
