import NIOSSL
import X509

/// Reads the topic out of a client certificate the TLS layer already verified against the sandbox CA.
enum SandboxClientCertificate {
    /// A `UID` (0.9.2342.19200300.100.1.1) attribute: where APNs push certificates put the bundle ID.
    static func userID(_ bundleID: String) -> RelativeDistinguishedName.Attribute {
        .init(type: [0, 9, 2342, 19_200_300, 100, 1, 1], utf8String: bundleID)
    }

    static func isUserID(_ attribute: RelativeDistinguishedName.Attribute) -> Bool {
        attribute.type == [0, 9, 2342, 19_200_300, 100, 1, 1]
    }

    /// nil when the certificate has no usable UID.
    static func bundleID(of certificate: NIOSSLCertificate) -> String? {
        guard let der = try? certificate.toDERBytes(), let parsed = try? Certificate(derEncoded: der) else { return nil }
        for relativeName in parsed.subject {
            for attribute in relativeName where Self.isUserID(attribute) {
                return String(attribute.value)
            }
        }
        return nil
    }
}
