/// A client certificate and key presented during the TLS handshake (APNs certificate auth).
public struct TLSClientIdentity: Sendable {
    enum Source: Sendable {
        case pem(certificateFile: String, privateKeyFile: String, password: String?)
        case pkcs12(file: String, password: String)
    }

    let source: Source

    /// `certificateFile` may hold the leaf followed by intermediates; the key may be encrypted.
    public static func pem(certificateFile: String, privateKeyFile: String, password: String? = nil) -> TLSClientIdentity {
        TLSClientIdentity(source: .pem(certificateFile: certificateFile, privateKeyFile: privateKeyFile, password: password))
    }

    /// Old exports (RC2/3DES) parse too: the OpenSSL legacy provider is loaded for them.
    public static func pkcs12(file: String, password: String) -> TLSClientIdentity {
        TLSClientIdentity(source: .pkcs12(file: file, password: password))
    }
}
