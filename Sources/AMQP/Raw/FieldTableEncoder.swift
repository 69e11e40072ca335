internal import CRabbitMQ

/// Swift field tables into rabbitmq-c structs, in memory from `pool` (for a connection, its scratch
/// pool, recycled after each call that used it).
///
/// rabbitmq-c writes a table key's length as one byte without checking it, so a key longer than 255
/// bytes would go out as a corrupt frame that the broker closes the connection for. Such keys come
/// from publishers: a header name with invalid UTF-8 decodes to U+FFFD, three bytes for each bad
/// one. They are refused here as `unencodable`, before anything is written.
struct FieldTableEncoder {
    /// An AMQP short string (a table key) holds at most this many bytes.
    static let maxKeyBytes = 255

    let pool: UnsafeMutablePointer<amqp_pool_t>

    func encode(table: [String: AMQPFieldValue]) throws(AMQPError) -> amqp_table_t {
        guard !table.isEmpty else { return amqp_table_t(num_entries: 0, entries: nil) }
        let entries = try allocate(amqp_table_entry_t.self, count: table.count)
        // Sorted so the wire encoding is deterministic.
        for (index, (key, value)) in table.sorted(by: { $0.key < $1.key }).enumerated() {
            guard key.utf8.count <= Self.maxKeyBytes else {
                throw AMQPError(code: .unencodable,
                                message: "a field table key is \(key.utf8.count) bytes; AMQP allows at most \(Self.maxKeyBytes)")
            }
            (entries + index).initialize(to: amqp_table_entry_t(key: try bytes(key.utf8), value: try encode(value: value)))
        }
        return amqp_table_t(num_entries: Int32(table.count), entries: entries)
    }

    func encode(value: AMQPFieldValue) throws(AMQPError) -> amqp_field_value_t {
        var field = amqp_field_value_t()
        switch value {
        case .string(let string):
            field.kind = UInt8(ascii: "S")
            field.value.bytes = try bytes(string.utf8)
        case .int(let int):
            field.kind = UInt8(ascii: "l")
            field.value.i64 = int
        case .bool(let bool):
            field.kind = UInt8(ascii: "t")
            field.value.boolean = bool ? 1 : 0
        case .double(let double):
            field.kind = UInt8(ascii: "d")
            field.value.f64 = double
        case .bytes(let raw):
            field.kind = UInt8(ascii: "x")
            field.value.bytes = try bytes(raw)
        case .timestamp(let timestamp):
            field.kind = UInt8(ascii: "T")
            field.value.u64 = timestamp
        case .array(let array):
            field.kind = UInt8(ascii: "A")
            if array.isEmpty {
                field.value.array = amqp_array_t(num_entries: 0, entries: nil)
            } else {
                let entries = try allocate(amqp_field_value_t.self, count: array.count)
                for (index, element) in array.enumerated() {
                    (entries + index).initialize(to: try encode(value: element))
                }
                field.value.array = amqp_array_t(num_entries: Int32(array.count), entries: entries)
            }
        case .table(let table):
            field.kind = UInt8(ascii: "F")
            field.value.table = try encode(table: table)
        case .void:
            field.kind = UInt8(ascii: "V")
        }
        return field
    }

    /// Copies `source` into the pool.
    func bytes(_ source: some Collection<UInt8>) throws(AMQPError) -> amqp_bytes_t {
        let count = source.count
        guard count > 0 else { return amqp_bytes_t(len: 0, bytes: nil) }
        guard let raw = amqp_pool_alloc(pool, count) else {
            throw AMQPError(code: .library, message: "out of memory encoding a frame")
        }
        UnsafeMutableRawBufferPointer(start: raw, count: count).copyBytes(from: source)
        return amqp_bytes_t(len: count, bytes: raw)
    }

    func allocate<T>(_ type: T.Type, count: Int) throws(AMQPError) -> UnsafeMutablePointer<T> {
        guard let raw = amqp_pool_alloc(pool, MemoryLayout<T>.stride * count) else {
            throw AMQPError(code: .library, message: "out of memory encoding a table")
        }
        return raw.bindMemory(to: T.self, capacity: count)
    }
}

/// Field tables to and from their wire encoding, each call with pools of its own, through the same
/// code a connection uses: for the unit tests and Fuzz/FuzzAMQPFieldTable, which check that a table
/// the worker decodes can be sent again.
enum FieldTableWire {
    static func encode(_ table: [String: AMQPFieldValue]) throws(AMQPError) -> [UInt8] {
        try withPool { pool throws(AMQPError) in
            var raw = try FieldTableEncoder(pool: pool).encode(table: table)
            var capacity = 4096
            while true {
                var output = [UInt8](repeating: 0, count: capacity)
                var written = 0
                let status = output.withUnsafeMutableBytes { buffer in
                    amqp_encode_table(amqp_bytes_t(len: buffer.count, bytes: buffer.baseAddress), &raw, &written)
                }
                if status == AMQP_STATUS_OK.rawValue { return Array(output.prefix(written)) }
                // Out of room is TABLE_TOO_BIG, except where the buffer ends right before a value's kind
                // byte: rabbitmq-c then says BAD_AMQP_DATA, with the offset at the end of the buffer.
                let outOfRoom = status == AMQP_STATUS_TABLE_TOO_BIG.rawValue
                    || (status == AMQP_STATUS_BAD_AMQP_DATA.rawValue && written >= capacity)
                guard outOfRoom, capacity < 1 << 30 else {
                    throw AMQPError(code: .unencodable, status: status, message: "amqp_encode_table failed")
                }
                capacity *= 2
            }
        }
    }

    /// The table and how many bytes it took, or nil where rabbitmq-c refuses the bytes.
    static func decode(_ bytes: [UInt8]) -> (table: [String: AMQPFieldValue], bytesRead: Int)? {
        withPool { pool in
            var mutable = bytes
            return mutable.withUnsafeMutableBytes { buffer -> (table: [String: AMQPFieldValue], bytesRead: Int)? in
                var table = amqp_table_t()
                var offset = 0
                guard amqp_decode_table(amqp_bytes_t(len: buffer.count, bytes: buffer.baseAddress), pool, &table, &offset)
                    == AMQP_STATUS_OK.rawValue else { return nil }
                return (AMQPConnection.decode(table: table), offset)
            }
        }
    }

    private static func withPool<Result, Failure: Error>(
        _ body: (UnsafeMutablePointer<amqp_pool_t>) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let pool = UnsafeMutablePointer<amqp_pool_t>.allocate(capacity: 1)
        init_amqp_pool(pool, 4096)
        defer {
            empty_amqp_pool(pool)
            pool.deallocate()
        }
        return try body(pool)
    }
}
