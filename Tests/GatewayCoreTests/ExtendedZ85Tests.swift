import Testing
@testable import GatewayCore

/// ZeroMQ RFC 32/Z85, extended to any length as toot-relay's README describes.
@Suite struct ExtendedZ85Tests {
    @Test func theSpecsTestVector() {
        let bytes: [UInt8] = [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B]
        #expect(ExtendedZ85.encode(bytes) == "HelloWorld")
        #expect(ExtendedZ85.decode("HelloWorld") == bytes)
    }

    @Test func aTailOfOneToThreeBytesIsOneDigitMoreThanItsBytes() {
        #expect(ExtendedZ85.encode([0x00]) == "00")
        #expect(ExtendedZ85.encode([0xFF]) == "30")                 // 255 = 3 × 85 + 0
        #expect(ExtendedZ85.encode([0xFF, 0xFF]) == "960")          // 65535 = 9 × 85² + 6 × 85
        #expect(ExtendedZ85.encode([0xFF, 0xFF, 0xFF]) == "rr90")   // 16777215 = 27 × 85³ + 27 × 85² + 9 × 85
        #expect(ExtendedZ85.encode([0x86, 0x4F, 0xD2, 0x6F, 0x01]) == "Hello01")
    }

    @Test(arguments: 0...9) func everyLengthRoundTrips(length: Int) {
        for seed in 0..<50 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ seed &* 31 &+ (seed == 0 ? 255 : 0)) }
            let encoded = ExtendedZ85.encode(bytes)
            #expect(encoded.utf8.count == ExtendedZ85.encodedLength(of: length))
            #expect(ExtendedZ85.decode(encoded) == bytes)
        }
        let extremes: [[UInt8]] = [Array(repeating: 0, count: length), Array(repeating: 0xFF, count: length)]
        for bytes in extremes { #expect(ExtendedZ85.decode(ExtendedZ85.encode(bytes)) == bytes) }
    }

    @Test func lengthsGrowFourToFive() {
        #expect((0...9).map(ExtendedZ85.encodedLength(of:)) == [0, 2, 3, 4, 5, 7, 8, 9, 10, 12])
        #expect(ExtendedZ85.encodedLength(of: 65) == 82)
        #expect(ExtendedZ85.encodedLength(of: 16) == 20)
    }

    @Test func whatNoEncoderWritesDoesNotDecode() {
        #expect(ExtendedZ85.decode("0") == nil)          // a 1-character tail encodes nothing
        #expect(ExtendedZ85.decode("Hello0") == nil)
        #expect(ExtendedZ85.decode("Hel~o") == nil)      // not in the alphabet
        #expect(ExtendedZ85.decode("He\"lo") == nil)
        #expect(ExtendedZ85.decode("#####") == nil)      // 85⁵ − 1 is over 32 bits
        #expect(ExtendedZ85.decode("zz") == nil)         // 3010 is over 8 bits
        #expect(ExtendedZ85.decode("") == [])
    }
}
