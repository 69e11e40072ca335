import PushCore
import Yams

/// Typed reads from YAML nodes that never stop at the first problem: each one is recorded with
/// the file, the line and the field's path, and the read gives nil.
struct NodeReader {
    let file: String
    private(set) var findings: [ConfigurationFinding] = []
    private(set) var lines: [String: Int] = [:]

    init(file: String) { self.file = file }

    mutating func fail(_ field: String, line: Int?, _ message: String) {
        findings.append(ConfigurationFinding(file: file, line: line, field: field, message: message))
    }

    mutating func fail(_ field: String, at node: Node?, _ message: String) {
        fail(field, line: node?.mark?.line, message)
    }

    /// A mapping whose keys are all in `allowed`: an unknown key is an error (a typo would
    /// otherwise leave a setting at its default without a word), with the closest known key.
    mutating func mapping(_ node: Node, at field: String, allowed: [String]) -> [String: Node]? {
        lines[field] = node.mark?.line
        guard case let .mapping(mapping) = node else {
            fail(field, at: node, "expected a mapping (key: value lines), got \(Self.kind(node))")
            return nil
        }
        var values = [String: Node]()
        for (key, value) in mapping {
            guard let name = key.scalar?.string else {
                fail(field, at: key, "keys must be plain words, got \(Self.kind(key))")
                continue
            }
            let path = field.isEmpty ? name : "\(field).\(name)"
            guard allowed.contains(name) else {
                let hint = Self.closest(to: name, in: allowed).map { "did you mean \($0)?" }
                    ?? "known keys here: \(allowed.joined(separator: ", "))"
                fail(path, at: key, "unknown key (\(hint))")
                continue
            }
            guard values[name] == nil else {
                fail(path, at: key, "given twice")
                continue
            }
            lines[path] = value.mark?.line ?? key.mark?.line
            values[name] = value
        }
        return values
    }

    /// A scalar as text; an absent or empty (`key:`) value is nil without an error.
    mutating func string(_ node: Node?, at field: String) -> String? {
        guard let node else { return nil }
        guard let scalar = node.scalar else {
            fail(field, at: node, "expected a value, got \(Self.kind(node))")
            return nil
        }
        if node.null != nil || scalar.string.isEmpty { return nil }
        return scalar.string
    }

    mutating func int(_ node: Node?, at field: String, range: ClosedRange<Int>) -> Int? {
        guard let text = string(node, at: field) else { return nil }
        guard let value = Int(text.replacingUnderscores) else {
            fail(field, at: node, "expected a whole number, got \"\(text)\"")
            return nil
        }
        guard range.contains(value) else {
            fail(field, at: node, "must be \(range.lowerBound)…\(range.upperBound), got \(value)")
            return nil
        }
        return value
    }

    mutating func bool(_ node: Node?, at field: String) -> Bool? {
        guard let text = string(node, at: field) else { return nil }
        switch text.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default:
            fail(field, at: node, "expected true or false, got \"\(text)\"")
            return nil
        }
    }

    /// `30s`, `500ms`, `2m`, `1h`, or a number of seconds.
    mutating func duration(_ node: Node?, at field: String, positive: Bool = true) -> Duration? {
        guard let text = string(node, at: field) else { return nil }
        guard let duration = DurationText.parse(text), !positive || duration > .zero else {
            fail(field, at: node, "expected a duration such as 500ms, 30s, 2m or 1h, got \"\(text)\"")
            return nil
        }
        return duration
    }

    mutating func choice<Value: RawRepresentable & CaseIterable>(_ node: Node?, at field: String, of type: Value.Type) -> Value? where Value.RawValue == String {
        guard let text = string(node, at: field) else { return nil }
        guard let value = Value(rawValue: text) else {
            fail(field, at: node, "expected one of \(Value.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(text)\"")
            return nil
        }
        return value
    }

    /// A secret is `{file: PATH}` or `{env: NAME}` (with `base64: true` when the variable holds
    /// the secret's Base64); written in the file itself it would travel with every copy of it.
    mutating func secret(_ node: Node?, at field: String) -> SecretSource? {
        guard let node else { return nil }
        if node.scalar != nil {
            guard string(node, at: field) != nil else { return nil }
            fail(field, at: node, "write a secret as {env: VARIABLE} or {file: PATH}, not in the file itself")
            return nil
        }
        guard let values = mapping(node, at: field, allowed: ["env", "file", "base64"]) else { return nil }
        let env = string(values["env"], at: "\(field).env")
        let path = string(values["file"], at: "\(field).file")
        let base64 = bool(values["base64"], at: "\(field).base64") ?? false
        switch (env, path) {
        case let (.some(name), nil): return .environment(name, base64: base64)
        case let (nil, .some(path)):
            if values["base64"] != nil { fail("\(field).base64", at: values["base64"], "only with env") }
            return .file(path)
        case (.some, .some):
            fail(field, at: node, "give env or file, not both")
        case (nil, nil):
            fail(field, at: node, "give env: VARIABLE or file: PATH")
        }
        return nil
    }

    static func kind(_ node: Node) -> String {
        switch node {
        case .scalar(let scalar): "\"\(scalar.string)\""
        case .mapping: "a mapping"
        case .sequence: "a list"
        case .alias: "an alias"
        }
    }

    /// The allowed key nearest to a misspelt one, when it is near enough to be the likely intent.
    static func closest(to word: String, in candidates: [String]) -> String? {
        let scored = candidates.map { ($0, distance(word, $0)) }.min { $0.1 < $1.1 }
        guard let (candidate, score) = scored, score <= max(2, word.count / 3) else { return nil }
        return candidate
    }

    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

private extension String {
    /// `4_194_304`: YAML 1.1 allows it and people write it for byte counts.
    var replacingUnderscores: String { String(filter { $0 != "_" }) }
}
