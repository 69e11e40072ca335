import PushCore

/// Per-app values (clients, breakers) found by app name on every job, three times a one-token job.
/// A worker serves a few apps: a `LengthFirstNames` scan; many apps go through a dictionary.
struct AppTable<Value: Sendable>: Sendable {
    private let names: LengthFirstNames
    private let values: [Value]
    private let byName: [String: Value]?
    static var scanLimit: Int { 8 }

    init(_ dictionary: [String: Value]) {
        let sorted = dictionary.sorted { $0.key < $1.key }
        names = LengthFirstNames(sorted.map(\.key))
        values = sorted.map(\.value)
        byName = dictionary.count > Self.scanLimit ? dictionary : nil
    }

    subscript(_ app: String) -> Value? {
        if let byName { return byName[app] }
        guard let index = names.index(of: app) else { return nil }
        return values[index]
    }

    /// App names in order.
    var keys: [String] { names.names }
    var allValues: [Value] { values }

    func mapValues<Other: Sendable>(_ transform: (Value) -> Other) -> AppTable<Other> {
        AppTable<Other>(Dictionary(uniqueKeysWithValues: zip(names.names, values.map(transform))))
    }
}
