/// Reading a request's `:path` (without its query) by bytes: with Foundation loaded, String
/// searches would go through CFString, and the path is whatever the client sent.
enum SandboxPath {
    /// What follows `prefix`, or nil when the path does not start with it.
    static func remainder(of path: Substring, after prefix: String) -> Substring? {
        let utf8 = path.utf8
        guard utf8.starts(with: prefix.utf8) else { return nil }
        return Substring(utf8.dropFirst(prefix.utf8.count))
    }

    /// The one non-empty segment that follows `prefix` (`/4/broadcasts/apps/<segment>`), or nil.
    static func segment(of path: Substring, after prefix: String) -> String? {
        guard let rest = self.remainder(of: path, after: prefix), !rest.isEmpty,
              !rest.utf8.contains(UInt8(ascii: "/")) else { return nil }
        return String(rest)
    }

    /// The two non-empty segments that follow `prefix` (`/1/apps/<first>/<second>`), or nil.
    static func segments(of path: Substring, after prefix: String) -> (first: String, second: String)? {
        guard let rest = self.remainder(of: path, after: prefix),
              let slash = rest.utf8.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let first = rest[..<slash]
        let second = rest[rest.utf8.index(after: slash)...]
        guard !first.isEmpty, !second.isEmpty, !second.utf8.contains(UInt8(ascii: "/")) else { return nil }
        return (String(first), String(second))
    }
}
