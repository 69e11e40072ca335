/// A short list of names, looked up by a scan that compares UTF-8 lengths before contents.
///
/// For a handful of names (a job's fields, a worker's apps, a connection's consumer tags) this
/// beats a `Dictionary`, which hashes the looked-up string on every lookup (measured:
/// docs/evidence/code-measurements.md#length-first-names). Comparing lengths first
/// matters too: `==` on two different Strings takes the slow path, and the length check skips it
/// for nearly every name but the one. The lengths are kept beside the names, so a lookup reads
/// two arrays, allocates nothing and walks no String index.
public struct LengthFirstNames: Sendable {
    @usableFromInline var storage: [String]
    @usableFromInline var lengths: [Int]

    public init(_ names: [String] = []) {
        storage = names
        lengths = names.map(\.utf8.count)
    }

    /// The names in order.
    @inlinable public var names: [String] { storage }
    @inlinable public var count: Int { storage.count }

    /// The position of `name`, the first if it is there more than once.
    @inlinable public func index(of name: String) -> Int? {
        let length = name.utf8.count
        for index in lengths.indices where lengths[index] == length && storage[index] == name {
            return index
        }
        return nil
    }

    public mutating func append(_ name: String) {
        storage.append(name)
        lengths.append(name.utf8.count)
    }

    public mutating func remove(at index: Int) {
        storage.remove(at: index)
        lengths.remove(at: index)
    }
}
