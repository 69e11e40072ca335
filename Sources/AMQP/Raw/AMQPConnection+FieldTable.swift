internal import CRabbitMQ

/// Field tables and basic.properties between Swift values and rabbitmq-c structs.
/// Outgoing values are built in the scratch pool; incoming ones are copied out immediately.
extension AMQPConnection {
    /// See `FieldTableEncoder`: a key longer than 255 bytes is refused as `unencodable`.
    func encode(table: [String: AMQPFieldValue]) throws(AMQPError) -> amqp_table_t {
        try scratchEncoder.encode(table: table)
    }

    static func decode(table: amqp_table_t) -> [String: AMQPFieldValue] {
        guard table.num_entries > 0, let entries = table.entries else { return [:] }
        var result: [String: AMQPFieldValue] = [:]
        result.reserveCapacity(Int(table.num_entries))
        for index in 0..<Int(table.num_entries) {
            let entry = entries[index]
            result[string(entry.key)] = decode(value: entry.value)
        }
        return result
    }

    static func decode(value field: amqp_field_value_t) -> AMQPFieldValue {
        let value = field.value
        switch field.kind {
        case UInt8(ascii: "S"): return .string(string(value.bytes))
        case UInt8(ascii: "x"): return .bytes(array(value.bytes))
        case UInt8(ascii: "t"): return .bool(value.boolean != 0)
        // Any integer width is accepted: brokers and other clients choose differently.
        case UInt8(ascii: "b"): return .int(Int64(value.i8))
        case UInt8(ascii: "B"): return .int(Int64(value.u8))
        case UInt8(ascii: "s"): return .int(Int64(value.i16))
        case UInt8(ascii: "u"): return .int(Int64(value.u16))
        case UInt8(ascii: "I"): return .int(Int64(value.i32))
        case UInt8(ascii: "i"): return .int(Int64(value.u32))
        case UInt8(ascii: "l"): return .int(value.i64)
        case UInt8(ascii: "L"): return .int(Int64(clamping: value.u64))
        case UInt8(ascii: "f"): return .double(Double(value.f32))
        case UInt8(ascii: "d"): return .double(value.f64)
        case UInt8(ascii: "D"):
            var scale = 1.0
            for _ in 0..<value.decimal.decimals { scale *= 10 }
            return .double(Double(value.decimal.value) / scale)
        case UInt8(ascii: "T"): return .timestamp(value.u64)
        case UInt8(ascii: "F"): return .table(decode(table: value.table))
        case UInt8(ascii: "A"):
            guard value.array.num_entries > 0, let entries = value.array.entries else { return .array([]) }
            return .array((0..<Int(value.array.num_entries)).map { decode(value: entries[$0]) })
        default: return .void
        }
    }

    func encode(properties: AMQPProperties) throws(AMQPError) -> amqp_basic_properties_t {
        var raw = amqp_basic_properties_t()
        raw.delivery_mode = properties.persistent ? 2 : 1
        // Flags are collected separately: mutating raw._flags while an inout access to another
        // field of raw is open would be an exclusivity violation.
        var flags = amqp_flags_t(AMQP_BASIC_DELIVERY_MODE_FLAG)
        func bytes(_ value: String?, _ flag: Int32) throws(AMQPError) -> amqp_bytes_t {
            guard let value else { return amqp_bytes_t(len: 0, bytes: nil) }
            flags |= amqp_flags_t(flag)
            return try scratchBytes(value)
        }
        raw.content_type = try bytes(properties.contentType, AMQP_BASIC_CONTENT_TYPE_FLAG)
        raw.message_id = try bytes(properties.messageID, AMQP_BASIC_MESSAGE_ID_FLAG)
        raw.correlation_id = try bytes(properties.correlationID, AMQP_BASIC_CORRELATION_ID_FLAG)
        raw.type = try bytes(properties.type, AMQP_BASIC_TYPE_FLAG)
        raw.app_id = try bytes(properties.appID, AMQP_BASIC_APP_ID_FLAG)
        raw.expiration = try bytes(properties.expiration, AMQP_BASIC_EXPIRATION_FLAG)
        raw._flags = flags
        if let timestamp = properties.timestamp {
            raw._flags |= amqp_flags_t(AMQP_BASIC_TIMESTAMP_FLAG)
            raw.timestamp = timestamp
        }
        if !properties.headers.isEmpty {
            raw._flags |= amqp_flags_t(AMQP_BASIC_HEADERS_FLAG)
            raw.headers = try encode(table: properties.headers)
        }
        return raw
    }

    static func decode(properties raw: amqp_basic_properties_t) -> AMQPProperties {
        func has(_ flag: Int32) -> Bool { raw._flags & amqp_flags_t(flag) != 0 }
        return AMQPProperties(
            contentType: has(AMQP_BASIC_CONTENT_TYPE_FLAG) ? string(raw.content_type) : nil,
            messageID: has(AMQP_BASIC_MESSAGE_ID_FLAG) ? string(raw.message_id) : nil,
            correlationID: has(AMQP_BASIC_CORRELATION_ID_FLAG) ? string(raw.correlation_id) : nil,
            type: has(AMQP_BASIC_TYPE_FLAG) ? string(raw.type) : nil,
            appID: has(AMQP_BASIC_APP_ID_FLAG) ? string(raw.app_id) : nil,
            timestamp: has(AMQP_BASIC_TIMESTAMP_FLAG) ? raw.timestamp : nil,
            expiration: has(AMQP_BASIC_EXPIRATION_FLAG) ? string(raw.expiration) : nil,
            headers: has(AMQP_BASIC_HEADERS_FLAG) ? decode(table: raw.headers) : [:],
            persistent: has(AMQP_BASIC_DELIVERY_MODE_FLAG) && raw.delivery_mode == 2
        )
    }
}
