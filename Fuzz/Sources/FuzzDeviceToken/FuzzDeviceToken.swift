// Any string as a device token, checked against the contract in Sources/PushCore/DeviceToken.swift:
// accepted exactly when it is even-length hex of 64…400 characters (then `hex` is the input in
// lowercase) or 44 characters of standard Base64 ending in '=' that decode to 32 bytes (then `hex`
// is those bytes, and the input is their one canonical spelling); `given` is always the input.
// Validating a token's own hex gives the same token. A rejection never repeats the input (tokens
// stay out of descriptions: one depends on the length alone).
@testable import PushCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let utf8 = Array(text.utf8)
    let isHexDigits = utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0 | 0x20) }
    let isHexToken = isHexDigits && utf8.count % 2 == 0
        && utf8.count >= DeviceToken.minHexLength && utf8.count <= DeviceToken.maxHexLength
    let base64Bytes: [UInt8]? = if !isHexDigits, utf8.count == 44, utf8.last == UInt8(ascii: "="),
        !utf8.contains(UInt8(ascii: "-")), !utf8.contains(UInt8(ascii: "_")),
        let bytes = Base64.decode(text), bytes.count == 32 { bytes } else { nil }

    let token: DeviceToken
    do {
        token = try DeviceToken(validating: text)
    } catch {
        precondition(!isHexToken, "rejected \(utf8.count) characters of hex")
        precondition(base64Bytes.map { Base64.encode($0) != text } ?? true, "rejected canonical 32-byte Base64")
        precondition(error.length == utf8.count, "a TokenProblem of length \(error.length) for \(utf8.count) bytes")
        // The description depends on the length alone: the same as for that many '!'s.
        let description = error.description
        do {
            _ = try DeviceToken(validating: String(repeating: "!", count: utf8.count))
            preconditionFailure("accepted \(utf8.count) '!'s")
        } catch {
            precondition(error.description == description, "a TokenProblem description depends on the token's text")
        }
        precondition(description.utf8.count < 300, "a TokenProblem description of \(description.utf8.count) bytes")
        return 0
    }
    precondition(token.given.utf8.elementsEqual(utf8), "given is not the input")
    let hex = Array(token.identity.utf8)
    precondition(hex.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }, "the token's hex is not lowercase hex")
    if isHexToken {
        precondition(token.identity == text.lowercased(), "a hex token is not the input in lowercase")
    } else {
        guard let bytes = base64Bytes else { preconditionFailure("accepted \(utf8.count) bytes that are neither a hex token nor 32-byte Base64") }
        precondition(Base64.encode(bytes) == text, "accepted a non-canonical Base64 spelling of 32 bytes")
        precondition(hex.count == 64, "\(hex.count) hex characters for a 32-byte token")
        precondition(Hex.encode(bytes) == token.identity, "a Base64 token's hex is not its bytes")
    }
    precondition(hex.count >= DeviceToken.minHexLength && hex.count <= DeviceToken.maxHexLength, "accepted \(hex.count) hex characters")
    let reparsed = try? DeviceToken(validating: token.identity)
    precondition(reparsed == token && reparsed?.identity == token.identity, "a token's own hex does not validate to the same token")
    precondition(DeviceToken(trustedHex: token.identity) == token, "trustedHex differs")
    return 0
}
