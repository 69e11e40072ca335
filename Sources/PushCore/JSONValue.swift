import Foundation

/// A JSON document as read by Foundation's JSONDecoder, which (unlike JSONSerialization on Linux)
/// keeps `1` and `true` apart: a job's `"priority": 1` is a number, `"content-available": 1` too.
public indirect enum JSONValue: Sendable, Hashable, Decodable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // Most common first (jobs are mostly token strings): every failed try costs a thrown error.
        if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public static func parse(_ bytes: [UInt8]) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
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
