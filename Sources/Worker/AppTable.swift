/// Per-app values (clients, breakers) found by app name on every job. A worker serves a few apps,
/// so a scan comparing lengths first beats hashing the name (`Dictionary` cost ~500 instructions a
/// lookup, three a one-token job: callgrind of `ops/bench` a). Many apps go through a dictionary.
struct AppTable<Value: Sendable>: Sendable {
    private let names: [String]
    private let values: [Value]
    private let byName: [String: Value]?
    static var scanLimit: Int { 8 }

    init(_ dictionary: [String: Value]) {
        let sorted = dictionary.sorted { $0.key < $1.key }
        names = sorted.map(\.key)
        values = sorted.map(\.value)
        byName = dictionary.count > Self.scanLimit ? dictionary : nil
    }

    subscript(_ app: String) -> Value? {
        if let byName { return byName[app] }
        let length = app.utf8.count
        guard let index = names.firstIndex(where: { $0.utf8.count == length && $0 == app }) else { return nil }
        return values[index]
    }

    /// App names in order.
    var keys: [String] { names }
    var allValues: [Value] { values }

    func mapValues<Other: Sendable>(_ transform: (Value) -> Other) -> AppTable<Other> {
        AppTable<Other>(Dictionary(uniqueKeysWithValues: zip(names, values.map(transform))))
    }
}
