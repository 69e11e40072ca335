@testable import AMQP
import Testing

/// Inputs that `ops/fuzz` (Fuzz/FuzzAMQPFieldTable) found, kept as tests; each is also in
/// Fuzz/Corpus/FuzzAMQPFieldTable/.
@Suite("AMQP field tables: fuzz regressions")
struct AMQPFuzzRegressionTests {
    /// crash-key-grows-past-255: a table whose one key is 86 bytes of 0xff (a legal AMQP short
    /// string), value `t` true. Decoded, each 0xff becomes U+FFFD: a 258-byte key.
    static let keyGrowsPast255: [UInt8] = [0, 0, 0, 89, 86] + [UInt8](repeating: 0xff, count: 86) + [UInt8(ascii: "t"), 1]

    // rabbitmq-c wrote the key's length as one byte (258 → 2) without a word, and the broker closes
    // the connection over such a frame (a job deferred with that header, every time it came back).
    @Test("a key that decodes to more than 255 bytes is refused as unencodable, not written as a corrupt table")
    func keyGrowsPast255() throws {
        let (table, bytesRead) = try #require(FieldTableWire.decode(Self.keyGrowsPast255))
        #expect(bytesRead == Self.keyGrowsPast255.count)
        #expect(table.keys.map(\.utf8.count) == [258])
        let error = #expect(throws: AMQPError.self) { try FieldTableWire.encode(table) }
        #expect(error?.code == .unencodable)
        #expect(error?.message.contains("258 bytes") == true)
        #expect(throws: AMQPError.self, "in a nested table") { try FieldTableWire.encode(["x-outer": .table(table)]) }
        #expect(throws: AMQPError.self, "in a table in an array") { try FieldTableWire.encode(["x-outer": .array([.table(table)])]) }
    }

    /// crash-buffer-ends-at-a-kind-byte (2,941 bytes, found after 578,408 runs): a table whose
    /// encoding ran out of the 4 KiB first try exactly before a value's kind byte, where rabbitmq-c
    /// answers BAD_AMQP_DATA instead of TABLE_TOO_BIG; the encoder took that for a table it cannot
    /// send. The same shape, built to end there: 4 (size) + "a" entry (1 + 1 + 1 + 4 + 4083) + "b" key (2).
    @Test("a table whose encoding fills the first buffer up to a value's kind byte is still encoded")
    func bufferEndsAtAKindByte() throws {
        let table: [String: AMQPFieldValue] = ["a": .string(String(repeating: "x", count: 4083)), "b": .bool(true)]
        let encoded = try FieldTableWire.encode(table)
        #expect(encoded.count == 4 + (1 + 1 + 1 + 4 + 4083) + (1 + 1 + 1 + 1))
        let decoded = try #require(FieldTableWire.decode(encoded))
        #expect(decoded.table == table)
    }

    @Test("keys of up to 255 bytes go out and come back unchanged, nested too")
    func longestKeys() throws {
        let key = String(repeating: "é", count: 127) + "x"
        #expect(key.utf8.count == 255)
        let table: [String: AMQPFieldValue] = [key: .table([key: 1, "list": .array([.table([key: "v"])])])]
        let encoded = try FieldTableWire.encode(table)
        let decoded = try #require(FieldTableWire.decode(encoded))
        #expect(decoded.table == table)
        #expect(decoded.bytesRead == encoded.count)
    }
}

/// Inputs that `ops/fuzz` (Fuzz/FuzzAMQPFrames) found, kept as tests; each is also in
/// Fuzz/Corpus/FuzzAMQPFrames/.
@Suite("AMQP frames: fuzz regressions")
struct AMQPFrameFuzzRegressionTests {
    /// crash-announced-body-size-beyond-memory (265 bytes, found after 330 runs): a delivery whose
    /// content header announces 0x0020_0000_0000_7d00 bytes. The reader reserved the announced size
    /// before reading a frame, and the failed allocation aborted the process.
    @Test("a content header announcing more than memory holds is an error at the stream's end, not an abort",
          arguments: [Int.max, 0])
    func announcedBodySizeBeyondMemory(limit: Int) throws {
        var stream = BrokerBytes()
        stream.deliver(channel: 1, consumerTag: "ctag-1", deliveryTag: 2, redelivered: true, exchange: "push", routingKey: "jobs")
        stream.header(channel: 1, bodySize: 0x0020_0000_0000_7d00)
        stream.body(channel: 1, Array(#"{"app":"demo","token"#.utf8))
        let peer = try FramePeer(sending: stream.bytes)
        let error = #expect(throws: AMQPError.self) { try peer.connection.readFrame(bodyLimit: { _ in limit }) }
        #expect(error?.code == .connectionLost)
        #expect(peer.connection.isBroken)

        let found = try FramePeer(sending: Self.foundInput)
        #expect(throws: AMQPError.self) { try found.connection.readFrame() }
    }

    /// The input as the fuzzer found it.
    static let foundInput: [UInt8] = hexBytes("""
        0100010000001e003c003c06637461672d310000000000000002010470757368046a6f6273ce0200010000000e003c00\
        00000020000000007d0000ce030001000000147b22617070223a2264656d6f222c22746f6b656fce030001000017003c\
        003c06637461672d31000000000000000100000171ce0200020000000e003c000000000000000000050000ce03000200\
        00000568656c6c6f616261626162616261626162225d2c227061796c6f6164223a7b22617073223a7b22616c65727422\
        ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff3a226869227d\
        7d7dce0100010000000d003c0050000000000000000901ce
        """)

    private static func hexBytes(_ hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }
}
