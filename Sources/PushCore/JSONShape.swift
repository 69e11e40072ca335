/// What a JSON value is without its contents: its type and, for an object, its member names in
/// order (repeated names included). Enough for rules that check a payload's structure without
/// building it (APNs: is `aps` an object, is it only `content-available`).
public enum JSONShape: Sendable, Equatable {
    case object(memberNames: [String])
    case array
    case string
    case number
    case bool
    case null

    /// As `JSONValue.typeName`, for the same error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    init(of value: JSONValue, memberNames: [String]) {
        switch value {
        case .null: self = .null
        case .bool: self = .bool
        case .int, .double: self = .number
        case .string: self = .string
        case .array: self = .array
        case .object: self = .object(memberNames: memberNames)
        }
    }
}
