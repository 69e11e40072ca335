import Crypto
import Foundation
import X509

/// Keys and certificates made on the spot in a fresh directory: a .p8 token key and client
/// certificates whose bundle ID and end date each test picks.
struct TestMaterial {
    let directory: String

    init() throws {
        directory = NSTemporaryDirectory() + "pushworker-config-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { "\(directory)/\(name)" }

    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        try text.write(toFile: path(name), atomically: true, encoding: .utf8)
        return path(name)
    }

    /// A key file, readable by its owner only (as key files should be: others' access is warned about).
    @discardableResult
    func writeKey(_ name: String, _ text: String, mode: Int = 0o600) throws -> String {
        let file = try write(name, text)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file)
        return file
    }

    /// A P-256 key in PKCS#8 PEM, what Apple's .p8 files hold.
    func tokenKey(_ name: String = "key.p8", mode: Int = 0o600) throws -> String {
        try writeKey(name, P256.Signing.PrivateKey().pemRepresentation, mode: mode)
    }

    /// A self-signed client certificate with the bundle ID as its subject's UID (as APNs
    /// certificates have), valid until `validUntil`; returns the certificate and key files.
    func certificate(bundleID: String = "com.example.cert", validUntil: Date = Date().addingTimeInterval(365 * 86_400),
                     name: String = "client") throws -> (certificate: String, key: String) {
        let key = P256.Signing.PrivateKey()
        let subject = DistinguishedName([
            RelativeDistinguishedName(.init(type: [0, 9, 2342, 19_200_300, 100, 1, 1], utf8String: bundleID)),
            RelativeDistinguishedName(.init(type: [2, 5, 4, 3], utf8String: "Apple Push Services: \(bundleID)")),
        ])
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: validUntil.addingTimeInterval(-2 * 365 * 86_400), notValidAfter: validUntil,
            issuer: subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: Certificate.Extensions {}, issuerPrivateKey: .init(key))
        return (try write("\(name).pem", certificate.serializeAsPEM().pemString), try writeKey("\(name)-key.pem", key.pemRepresentation))
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}
