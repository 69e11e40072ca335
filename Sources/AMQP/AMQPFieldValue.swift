/// A value in an AMQP field table (message headers, queue arguments).
///
/// Decoding folds every integer kind into `.int` (brokers and other clients pick
/// different widths, e.g. `x-death[].count` is a signed 64-bit long) and floats into `.double`.
public indirect enum AMQPFieldValue: Sendable, Hashable {
    case string(String)
    case int(Int64)
    case bool(Bool)
    case double(Double)
    case bytes([UInt8])
    case timestamp(UInt64)
    case array([AMQPFieldValue])
    case table([String: AMQPFieldValue])
    case void
}

extension AMQPFieldValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByFloatLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
}
