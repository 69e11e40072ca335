import Testing
@testable import PushCore

private func hex(length: Int, seed: Int = 0) -> String {
    let digits = Array("0123456789abcdef")
    return String((0..<length).map { digits[($0 * 7 + seed) % 16] })
}

@Suite("DeviceToken")
struct DeviceTokenTests {
    @Test("even-length hex of 64…400 characters is accepted as is", arguments: [64, 66, 128, 200, 398, 400])
    func accepted(_ length: Int) throws {
        let text = hex(length: length)
        #expect(try DeviceToken(validating: text).identity == text)
    }

    @Test("uppercase and mixed-case hex is lowercased")
    func lowercased() throws {
        #expect(try DeviceToken(validating: Tok.a.uppercased()).identity == Tok.a)
        let mixed = String(repeating: "aBcD", count: 16)
        #expect(try DeviceToken(validating: mixed).identity == mixed.lowercased())
    }

    @Test("rejected: odd length, too short, too long, not hex, empty", arguments: [
        hex(length: 65), hex(length: 401), hex(length: 32), hex(length: 402), hex(length: 500), "",
        String(repeating: "a", count: 63) + "!", hex(length: 62) + "  ",
        "<" + hex(length: 8) + " " + hex(length: 56) + ">", hex(length: 63) + "é",
    ])
    func rejected(_ text: String) {
        let problem = #expect(throws: TokenProblem.self) { try DeviceToken(validating: text) }
        #expect(problem?.length == text.utf8.count)
        #expect(problem?.description.contains("64–400 hex characters") == true)
        #expect(problem?.description.contains("got \(text.utf8.count) characters") == true)
    }

    // .bug("DeviceToken(validating:) falls back to Base64 for hex-only strings, so a truncated or odd-length hex token becomes a different token")
    @Test("a hex-only string of a bad length is rejected, not reread as Base64", arguments: [44, 60, 62, 63, 67, 99])
    func hexIsNeverBase64(_ length: Int) {
        let text = hex(length: length)
        #expect(throws: TokenProblem.self) { try DeviceToken(validating: text) }
    }

    @Test("44-character padded Base64 (32 bytes, standard alphabet) decodes to hex and is kept as given")
    func base64() throws {
        let bytes: [UInt8] = (0..<32).map { UInt8(255 - $0 * 3) }
        let text = Base64.encode(bytes)
        #expect(text.utf8.count == 44)
        let token = try DeviceToken(validating: text)
        #expect(token.identity == hexString(bytes))
        #expect(token.given == text, "events name the token as the job gave it")
        #expect(token == DeviceToken(trustedHex: hexString(bytes)), "the Base64 and the hex spelling are one device")
    }

    // .bug("a 64-character string that is not hex was taken as Base64 and sent as a different, 48-byte token")
    @Test("any other Base64 is refused: unpadded, url alphabet, other lengths, 64 non-hex characters", arguments: [
        Base64.encode((0..<32).map { UInt8($0 * 5) }, padded: false),
        Base64.encode([UInt8](repeating: 0xfb, count: 32), urlSafe: true),
        Base64.encode([UInt8](repeating: 0xfe, count: 31)),
        Base64.encode([UInt8](repeating: 0xfe, count: 33)),
        Base64.encode([UInt8](repeating: 0xfe, count: 48)),
        Base64.encode([UInt8](repeating: 0xfe, count: 200)),
        "zz" + String(repeating: "q", count: 62),
        String(repeating: "A", count: 42) + "==",
    ])
    func otherBase64Refused(_ text: String) {
        let problem = #expect(throws: TokenProblem.self) { try DeviceToken(validating: text) }
        #expect(problem?.description.contains("44 characters of Base64") == true)
    }

    @Test("hex is kept as given too: uppercase stays uppercase in events, lowercase goes to APNs")
    func givenHex() throws {
        let token = try DeviceToken(validating: Tok.a.uppercased())
        #expect(token.given == Tok.a.uppercased())
        #expect(token.identity == Tok.a)
    }

    @Test("shortened: the first 8 and last 4 hex digits, the middle hidden")
    func shortened() {
        let token = DeviceToken(trustedHex: "0123456789" + String(repeating: "e", count: 50) + "abcd")
        #expect(token.shortened == "01234567…abcd")
        #expect(token.description == token.shortened)
        #expect(!token.shortened.contains("89"))
        #expect(!"\(token)".contains("eeee"))
        #expect(DeviceToken(trustedHex: "abcdef012345").shortened == "abcdef012345", "12 characters or fewer are shown whole")
    }

    @Test("trustedHex is taken as is")
    func trusted() {
        #expect(DeviceToken(trustedHex: "XYZ").identity == "XYZ")
        #expect(DeviceToken(trustedHex: Tok.a) == (try? DeviceToken(validating: Tok.a.uppercased())))
    }
}

@Suite("Base64 (RFC 4648)")
struct Base64Tests {
    /// RFC 4648 §10.
    static let vectors: [(String, String)] = [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ]

    @Test("RFC 4648 §10 test vectors, padded", arguments: vectors)
    func padded(_ plain: String, _ encoded: String) {
        #expect(Base64.encode(Array(plain.utf8)) == encoded)
        #expect(Base64.decode(encoded) == Array(plain.utf8))
    }

    @Test("RFC 4648 §10 test vectors, unpadded", arguments: vectors)
    func unpadded(_ plain: String, _ encoded: String) {
        let bare = String(encoded.filter { $0 != "=" })
        #expect(Base64.encode(Array(plain.utf8), padded: false) == bare)
        #expect(Base64.encode(Array(plain.utf8), urlSafe: true, padded: false) == bare)
        #expect(Base64.decode(bare) == Array(plain.utf8))
    }

    @Test("standard padded encoding, as the proxy's Basic credentials use it")
    func proxyCredentials() {
        #expect(Base64.encode("".utf8) == "")
        #expect(Base64.encode("f".utf8) == "Zg==")
        #expect(Base64.encode("fo".utf8) == "Zm8=")
        #expect(Base64.encode("foo".utf8) == "Zm9v")
        #expect(Base64.encode([0xFF, 0xFE, 0xFD, 0x00]) == "//79AA==")
    }

    @Test("the two alphabets differ only in 62 and 63")
    func alphabets() {
        let bytes: [UInt8] = [0xfb, 0xff, 0xbf, 0xfb, 0xf0]
        #expect(Base64.encode(bytes) == "+/+/+/A=")
        #expect(Base64.encode(bytes, urlSafe: true) == "-_-_-_A=")
        #expect(Base64.encode(bytes, urlSafe: true, padded: false) == "-_-_-_A")
        #expect(Base64.decode("+/+/+/A=") == bytes)
        #expect(Base64.decode("-_-_-_A") == bytes)
    }

    @Test("every byte value and every tail length round-trips in both alphabets")
    func roundTrip() {
        let all = (0...255).map { UInt8($0) }
        for length in [0, 1, 2, 3, 4, 5, 254, 255, 256] {
            let bytes = Array(all.prefix(length))
            for urlSafe in [false, true] {
                for padded in [false, true] {
                    let text = Base64.encode(bytes, urlSafe: urlSafe, padded: padded)
                    #expect(text.utf8.count == (padded ? (length + 2) / 3 * 4 : (length * 4 + 2) / 3))
                    #expect(Base64.decode(text) == bytes)
                }
            }
        }
    }

    @Test("encode takes any collection of bytes")
    func collections() {
        #expect(Base64.encode("foobar".utf8) == "Zm9vYmFy")
        #expect(Base64.encode([UInt8]("xfoobar".utf8).dropFirst()) == "Zm9vYmFy")
    }

    @Test("invalid input decodes to nil", arguments: [
        "Z", "Zm9vY", "Zm9vYmFyZ", "Zg=a", "Zg==Zg==", "Zm9v!", "Zm 9v", "Zm9v\n", "Zé==", "%%%%", "Zm9v.Y",
    ])
    func invalid(_ text: String) {
        #expect(Base64.decode(text) == nil)
    }
}
