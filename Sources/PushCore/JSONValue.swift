/// A JSON document as `JSONParser` reads it: `1` and `true` stay apart (a job's `"priority": 1` is
/// a number, `"content-available": 1` too), integers stay exact.
/// Not `indirect`: arrays and dictionaries already hold their elements on the heap, and a boxed
/// case cost an allocation for every value of every job (four a one-token job).
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
        try JSONParser.parse(bytes)
    }

    /// How error messages name the kind of a value.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// A short rendering for error messages.
    public var rendered: String {
        switch self {
        case .null: "null"
        case let .bool(value): "\(value)"
        case let .int(value): "\(value)"
        case let .double(value): "\(value)"
        case let .string(value): "\"\(value.prefix(40))\""
        case .array, .object: typeName
        }
    }

    /// Integers, and doubles with no fraction (`5.0`).
    public var exactInteger: Int? {
        switch self {
        case let .int(value): Int(exactly: value)
        case let .double(value) where value.isFinite && value == value.rounded() && abs(value) < 9e15: Int(value)
        default: nil
        }
    }
}
