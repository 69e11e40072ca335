import PushCore
import Testing
import WebPush

/// Malformed subscriptions and payloads are refused with an error naming the field.
@Suite struct EncryptionErrorTests {
    static let validPoint = base64URL("BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4")
    static let validAuth = base64URL("BTBZMqHH6r4Tts7J_aSIgg")

    static func refusal(p256dh: [UInt8], auth: [UInt8] = validAuth) -> WebPushError? {
        #expect(throws: WebPushError.self) { try WebPushSubscriptionKeys(p256dh: p256dh, auth: auth) }
    }

    @Test(arguments: [0, 33, 64, 66, 97])
    func p256dhOfWrongLengthIsRefused(length: Int) {
        let point = Array((Self.validPoint + Array(repeating: 0, count: 40)).prefix(length))
        let error = Self.refusal(p256dh: point)
        #expect(error?.code == .invalidSubscriptionKey)
        #expect(error?.field == "keys.p256dh")
    }

    @Test func compressedP256dhIsRefused() {
        var point = Self.validPoint
        point[0] = 0x02
        #expect(Self.refusal(p256dh: point)?.field == "keys.p256dh")
        #expect(Self.refusal(p256dh: [0x03] + Array(Self.validPoint[1..<33]))?.field == "keys.p256dh")
    }

    @Test func p256dhOffTheCurveIsRefused() {
        var shifted = Self.validPoint
        shifted[64] ^= 0x01
        let offCurve = Self.refusal(p256dh: shifted)
        #expect(offCurve?.field == "keys.p256dh")
        #expect(offCurve?.message.contains("not a point") == true)
        #expect(Self.refusal(p256dh: [0x04] + Array(repeating: 0, count: 64))?.field == "keys.p256dh")
        // Coordinates above the field prime.
        #expect(Self.refusal(p256dh: [0x04] + Array(repeating: 0xFF, count: 64))?.field == "keys.p256dh")
    }

    @Test(arguments: [0, 12, 15, 17, 32])
    func authOfWrongLengthIsRefused(length: Int) {
        let error = Self.refusal(p256dh: Self.validPoint, auth: Array(repeating: 7, count: length))
        #expect(error?.code == .invalidSubscriptionKey)
        #expect(error?.field == "keys.auth")
        #expect(error?.description.contains("keys.auth") == true)
    }

    @Test func textThatIsNotBase64URLIsRefused() throws {
        let p256dh = Base64.encode(Self.validPoint, urlSafe: true, padded: false)
        let auth = Base64.encode(Self.validAuth, urlSafe: true, padded: false)
        #expect(throws: Never.self) { try WebPushSubscriptionKeys(p256dh: p256dh, auth: auth) }
        let badPoint = #expect(throws: WebPushError.self) { try WebPushSubscriptionKeys(p256dh: "BCV*sr7N", auth: auth) }
        #expect(badPoint?.field == "keys.p256dh")
        let badAuth = #expect(throws: WebPushError.self) { try WebPushSubscriptionKeys(p256dh: p256dh, auth: "BTBZ MqHH") }
        #expect(badAuth?.field == "keys.auth")
    }

    @Test func plaintextBeyondOneRecordIsRefused() throws {
        #expect(WebPushRecordFormat.maximumPlaintextLength == 3993)
        let keys = try WebPushSubscriptionKeys(p256dh: Self.validPoint, auth: Self.validAuth)
        let encryptor = try WebPushMessageEncryptor()
        let largest = try encryptor.encrypt(Array(repeating: 0x41, count: 3993), for: keys)
        #expect(largest.count == 4096)
        let error = #expect(throws: WebPushError.self) { try encryptor.encrypt(Array(repeating: 0x41, count: 3994), for: keys) }
        #expect(error?.code == .payloadTooLarge)
        #expect(error?.field == "payload")
    }
}
