import Crypto
import Sandbox
import Testing
@testable import WebPush

/// RFC 8291 Appendix A: the published example, byte for byte, in both directions.
@Suite struct RFC8291VectorTests {
    static let plaintext = Array("When I grow up, I want to be a watermelon".utf8)
    static let senderPrivateKey = base64URL("yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw")
    static let senderPublicKey = base64URL("BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8")
    static let userAgentPrivateKey = base64URL("q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94")
    static let userAgentPublicKey = base64URL("BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4")
    static let auth = base64URL("BTBZMqHH6r4Tts7J_aSIgg")
    static let salt = base64URL("DGv6ra1nlYgDCS1FRnbzlw")
    static let body = base64URL(
        "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN")

    @Test func encryptorReproducesTheBody() throws {
        let keys = try WebPushSubscriptionKeys(p256dh: Self.userAgentPublicKey, auth: Self.auth)
        let encryptor = try WebPushMessageEncryptor()
        let body = try encryptor.encrypt(Self.plaintext, for: keys, senderPrivateKey: Self.senderPrivateKey, salt: Self.salt)
        #expect(body.count == 144)
        #expect(body == Self.body)
    }

    @Test func senderKeyFromTheScalarHasTheVectorsPublicKey() throws {
        // The import computes the public point itself (d·G); the vector's keyid says what it must be.
        let key = try #require(try P256Key.keyPair(privateScalar: Self.senderPrivateKey))
        #expect(try key.uncompressedPublicKey() == Self.senderPublicKey)
        #expect(try key.privateScalar() == Self.senderPrivateKey)
    }

    @Test func decryptorRecoversThePlaintext() throws {
        let privateKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: Self.userAgentPrivateKey)
        #expect(Array(privateKey.publicKey.x963Representation) == Self.userAgentPublicKey)
        let decryptor = try WebPushMessageDecryptor(privateKey: privateKey, authSecret: Self.auth)
        let plaintext = try decryptor.decrypt(Self.body)
        #expect(String(decoding: plaintext, as: UTF8.self) == "When I grow up, I want to be a watermelon")
    }
}
