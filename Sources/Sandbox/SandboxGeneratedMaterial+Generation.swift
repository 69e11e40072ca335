import Crypto
import Foundation
import Logging
import X509

extension SandboxGeneratedMaterial {
    /// Creates what is missing or about to expire and keeps the rest. Everything the CA signed is
    /// re-issued when the CA itself is new.
    func createMissing(in directory: String, logger: Logger) async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let (caCertificate, caKey, caIsNew) = try self.loadOrCreateCA(logger: logger)

        if caIsNew || !Self.isUsable(certificateAt: self.serverCertificateFile, keyAt: self.serverPrivateKeyFile) {
            let key = P256.Signing.PrivateKey()
            let certificate = try Self.issue(
                subject: DistinguishedName { CommonName("localhost"); OrganizationName("Pushworker sandbox") },
                publicKey: key.publicKey, issuer: caCertificate, issuerKey: caKey,
                extensions: Certificate.Extensions {
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(KeyUsage(digitalSignature: true))
                    try ExtendedKeyUsage([.serverAuth])
                    SubjectAlternativeNames([
                        .dnsName("localhost"),
                        .ipAddress(.init(contentBytes: [127, 0, 0, 1])),
                        .ipAddress(.init(contentBytes: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])),
                    ])
                }
            )
            try Self.write(certificate.serializeAsPEM().pemString, to: self.serverCertificateFile, secret: false)
            try Self.write(key.pemRepresentation, to: self.serverPrivateKeyFile, secret: true)
            logger.info("sandbox: issued server certificate", metadata: ["file": "\(self.serverCertificateFile)"])
        }

        if !FileManager.default.fileExists(atPath: self.tokenKeyFile) {
            try Self.write(P256.Signing.PrivateKey().pemRepresentation, to: self.tokenKeyFile, secret: true)
            logger.info("sandbox: created token key", metadata: ["file": "\(self.tokenKeyFile)"])
        }

        if caIsNew || !Self.isUsable(certificateAt: self.clientCertificateFile, keyAt: self.clientPrivateKeyFile) {
            let key = P256.Signing.PrivateKey()
            let bundleID = Self.clientBundleID
            // The subject APNs push certificates carry: UID = bundle ID, CN = "Apple Push Services: <bundle>",
            // OU = team ID, C = US (OIDs written out: the X509 names for them live in SwiftASN1).
            let subject = DistinguishedName([
                RelativeDistinguishedName(SandboxClientCertificate.userID(bundleID)),
                RelativeDistinguishedName(.init(type: [2, 5, 4, 3], utf8String: "Apple Push Services: \(bundleID)")),
                RelativeDistinguishedName(.init(type: [2, 5, 4, 11], utf8String: self.teamID)),
                RelativeDistinguishedName(.init(type: [2, 5, 4, 6], utf8String: "US")),
            ])
            let certificate = try Self.issue(
                subject: subject, publicKey: key.publicKey, issuer: caCertificate, issuerKey: caKey,
                extensions: Certificate.Extensions {
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(KeyUsage(digitalSignature: true))
                    try ExtendedKeyUsage([.clientAuth])
                }
            )
            try Self.write(certificate.serializeAsPEM().pemString, to: self.clientCertificateFile, secret: false)
            try Self.write(key.pemRepresentation, to: self.clientPrivateKeyFile, secret: true)
            try? FileManager.default.removeItem(atPath: self.clientPKCS12File)
            logger.info("sandbox: issued client certificate", metadata: ["topic": "\(bundleID)"])
        }

        if !FileManager.default.fileExists(atPath: self.clientPKCS12File) {
            await self.exportClientPKCS12(logger: logger)
        }
    }

    private func loadOrCreateCA(logger: Logger) throws -> (Certificate, P256.Signing.PrivateKey, Bool) {
        // A CA without a subject key identifier (made by an older sandbox) is replaced: strict
        // verifiers (Python's urllib3, OpenSSL's -x509_strict) refuse chains without them.
        if Self.isUsable(certificateAt: self.caCertificateFile, keyAt: self.caPrivateKeyFile),
           let certificate = try? Certificate(pemEncoded: String(contentsOfFile: self.caCertificateFile, encoding: .utf8)),
           (try? certificate.extensions.subjectKeyIdentifier) != nil,
           let key = try? P256.Signing.PrivateKey(pemRepresentation: String(contentsOfFile: self.caPrivateKeyFile, encoding: .utf8)) {
            return (certificate, key, false)
        }
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("Pushworker Sandbox CA"); OrganizationName("Pushworker sandbox") }
        let now = Date()
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(10 * 365 * 86400),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: .init(key.publicKey))
            },
            issuerPrivateKey: .init(key)
        )
        try Self.write(certificate.serializeAsPEM().pemString, to: self.caCertificateFile, secret: false)
        try Self.write(key.pemRepresentation, to: self.caPrivateKeyFile, secret: true)
        logger.info("sandbox: created CA", metadata: ["file": "\(self.caCertificateFile)"])
        return (certificate, key, true)
    }

    private static func issue(
        subject: DistinguishedName,
        publicKey: P256.Signing.PublicKey,
        issuer: Certificate,
        issuerKey: P256.Signing.PrivateKey,
        extensions: Certificate.Extensions
    ) throws -> Certificate {
        let now = Date()
        // RFC 5280 §4.2.1.1: a certificate names its issuer's key (strict verifiers require it).
        var named = extensions
        try named.append(Certificate.Extension(AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: .init(issuerKey.publicKey)).keyIdentifier), critical: false))
        return try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(2 * 365 * 86400),
            issuer: issuer.subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: named, issuerPrivateKey: .init(issuerKey)
        )
    }

    /// Present, parseable and valid for at least another day.
    private static func isUsable(certificateAt certificatePath: String, keyAt keyPath: String) -> Bool {
        guard FileManager.default.fileExists(atPath: keyPath),
              let pem = try? String(contentsOfFile: certificatePath, encoding: .utf8),
              let certificate = try? Certificate(pemEncoded: pem)
        else { return false }
        return certificate.notValidAfter > Date().addingTimeInterval(86400)
    }

    private static func write(_ text: String, to path: String, secret: Bool) throws {
        let attributes: [FileAttributeKey: Any] = [.posixPermissions: secret ? 0o600 : 0o644]
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: attributes) else {
            throw SandboxError(message: "cannot write \(path)")
        }
    }

    /// swift-certificates cannot write PKCS#12, so this shells out to `openssl pkcs12 -export`
    /// (OpenSSL 3 defaults to AES-256 + PBKDF2, which loads without the legacy provider). The
    /// `.p12` is a convenience: without openssl the sandbox still runs.
    private func exportClientPKCS12(logger: Logger) async {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "openssl", "pkcs12", "-export",
            "-in", self.clientCertificateFile, "-inkey", self.clientPrivateKeyFile, "-certfile", self.caCertificateFile,
            "-name", Self.clientBundleID, "-passout", "pass:\(Self.clientPKCS12Password)", "-out", self.clientPKCS12File,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        // A termination handler, not waitUntilExit: on Linux that spins a run loop at full CPU.
        let status: Int32? = await withCheckedContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                logger.warning("sandbox: cannot run openssl to write the client .p12", metadata: ["error": "\(error)"])
                continuation.resume(returning: nil)
            }
        }
        if let status, status != 0 {
            logger.warning("sandbox: openssl pkcs12 -export failed", metadata: ["status": "\(status)"])
        }
    }
}
