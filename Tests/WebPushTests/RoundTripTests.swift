import Sandbox
import Testing
import WebPush

/// The OpenSSL encryptor against the swift-crypto decryptor, with fresh subscriptions.
@Suite struct RoundTripTests {
    @Test(arguments: [0, 1, 41, 1000, WebPushRecordFormat.maximumPlaintextLength])
    func randomSubscriptionDecryptsWhatWasSent(length: Int) throws {
        let subscription = try TestSubscription()
        let encryptor = try WebPushMessageEncryptor()
        let plaintext = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let body = try encryptor.encrypt(plaintext, for: subscription.keys)
        #expect(body.count == WebPushRecordFormat.headerLength + length + 1 + WebPushRecordFormat.tagLength)
        #expect(body.count <= 4096)
        #expect(try subscription.decryptor().decrypt(body) == plaintext)
    }

    @Test func headerHoldsSaltRecordSizeAndSenderKey() throws {
        let subscription = try TestSubscription()
        let body = try WebPushMessageEncryptor().encrypt(Array("hi".utf8), for: subscription.keys)
        #expect(Array(body[16..<20]) == [0x00, 0x00, 0x10, 0x00])
        #expect(body[20] == 65)
        #expect(body[21] == 0x04)
        // The sender key is a real P-256 point: the subscription keys' check accepts it.
        #expect(throws: Never.self) { try WebPushSubscriptionKeys(p256dh: Array(body[21..<86]), auth: subscription.auth) }
    }

    @Test func everyMessageHasItsOwnSaltAndSenderKey() throws {
        let subscription = try TestSubscription()
        let encryptor = try WebPushMessageEncryptor()
        let first = try encryptor.encrypt(Array("same".utf8), for: subscription.keys)
        let second = try encryptor.encrypt(Array("same".utf8), for: subscription.keys)
        #expect(first[0..<16] != second[0..<16])
        #expect(first[21..<86] != second[21..<86])
        #expect(first[86...] != second[86...])
    }

    @Test func oneEncryptorServesManySubscriptions() throws {
        let encryptor = try WebPushMessageEncryptor()
        for index in 0..<20 {
            let subscription = try TestSubscription()
            let plaintext = Array("message \(index)".utf8)
            #expect(try subscription.decryptor().decrypt(encryptor.encrypt(plaintext, for: subscription.keys)) == plaintext)
        }
    }

    @Test func anotherSubscriptionCannotRead() throws {
        let intended = try TestSubscription()
        let other = try TestSubscription()
        let body = try WebPushMessageEncryptor().encrypt(Array("secret".utf8), for: intended.keys)
        let error = #expect(throws: WebPushDecryptionError.self) { try other.decryptor().decrypt(body) }
        #expect(error?.code == .authenticationFailed)
    }

    /// One changed byte in the salt, the key id's length or value, the ciphertext or the tag is
    /// refused. Not the record size (bytes 16–19): RFC 8188 does not authenticate it, and with one
    /// record any size above the record's length decrypts the same.
    @Test(arguments: [0, 15, 20, 22, 60, 85, 86, 90, 100, -1])
    func tamperedBodyIsRefused(offset: Int) throws {
        let subscription = try TestSubscription()
        var body = try WebPushMessageEncryptor().encrypt(Array("pay the man 100 dollars".utf8), for: subscription.keys)
        let index = offset >= 0 ? offset : body.count + offset
        body[index] ^= 0x01
        #expect(throws: WebPushDecryptionError.self) { try subscription.decryptor().decrypt(body) }
    }

    @Test func truncatedOrExtendedBodyIsRefused() throws {
        let subscription = try TestSubscription()
        let body = try WebPushMessageEncryptor().encrypt(Array("hello".utf8), for: subscription.keys)
        let decryptor = try subscription.decryptor()
        for cut in [0, 10, 21, 85, 86, 100, body.count - 1] {
            #expect(throws: WebPushDecryptionError.self) { try decryptor.decrypt(Array(body.prefix(cut))) }
        }
        #expect(throws: WebPushDecryptionError.self) { try decryptor.decrypt(body + [0]) }
    }
}
