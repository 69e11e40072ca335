import Foundation
import PushCore
import Testing

/// Base64 against Foundation's encoder, an implementation that is not ours, for every length
/// remainder and both alphabets, and the spellings it must refuse.
@Suite struct Base64FoundationTests {
    @Test func encodesAsFoundationDoes() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<200 {
            let bytes = (0..<length).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            let expected = Data(bytes).base64EncodedString()
            #expect(Base64.encode(bytes) == expected)
            let urlSafe = expected.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            #expect(Base64.encode(bytes, urlSafe: true) == urlSafe)
            #expect(Base64.encode(bytes, urlSafe: true, padded: false) == urlSafe.replacingOccurrences(of: "=", with: ""))
            // A collection that is not contiguous takes the same path.
            #expect(Base64.encode(bytes.lazy.map { $0 }, urlSafe: true) == urlSafe)
            #expect(Base64.decode(expected) == bytes)
            #expect(Base64.decode(urlSafe) == bytes)
            #expect(Base64.decode(urlSafe.replacingOccurrences(of: "=", with: "")) == bytes)
        }
    }

    @Test func refusesWhatNoEncoderWrites() {
        #expect(Base64.decode("QUJD") == Array("ABC".utf8))
        #expect(Base64.decode("QQ") == Array("A".utf8))
        #expect(Base64.decode("QR") == nil, "bits after the last byte are not zero")
        #expect(Base64.decode("QUI") == Array("AB".utf8))
        #expect(Base64.decode("QUJ") == nil, "bits after the last byte are not zero")
        #expect(Base64.decode("Q") == nil, "one character is not a byte")
        #expect(Base64.decode("QUJDQ") == nil)
        #expect(Base64.decode("QU=D") == nil, "padding inside")
        #expect(Base64.decode("QUJD QUJD") == nil)
        #expect(Base64.decode("QUJ*") == nil)
        #expect(Base64.decode("QUJDé") == nil)
        #expect(Base64.decode("") == [])
    }
}
