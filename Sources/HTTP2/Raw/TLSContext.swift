internal import COpenSSL

/// The SSL_CTX shared by every connection of one client: trust store, ALPN and client
/// identity are per client. Used only on the client's I/O thread.
final class TLSContext {
    let raw: OpaquePointer

    init(configuration: HTTP2ClientConfiguration) throws(HTTP2Error) {
        guard let ctx = SSL_CTX_new(TLS_client_method()) else {
            throw HTTP2Error(code: .tlsFailed, message: "SSL_CTX_new failed: \(OpenSSLError.drain())")
        }
        raw = ctx
        // From here on deinit frees the context if a step below throws.
        guard pw_SSL_CTX_set_min_proto_version(ctx, pw_TLS1_2_VERSION()) == 1 else {
            throw Self.failure("setting the minimum TLS version")
        }
        _ = pw_SSL_CTX_set_mode(ctx, pw_SSL_MODE_PARTIAL_WRITES())
        // OpenSSL 3 otherwise reports a TCP close without close_notify as a protocol error.
        _ = pw_SSL_CTX_set_options(ctx, pw_SSL_OP_IGNORE_UNEXPECTED_EOF())
        // HTTP/2 forbids renegotiation (RFC 9113 §9.2.1), and one could leave records in the
        // buffering BIO where poll() cannot see them: a HelloRequest is refused.
        _ = pw_SSL_CTX_set_options(ctx, pw_SSL_OP_NO_RENEGOTIATION())
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nil)
        if configuration.useSystemCAStore {
            guard SSL_CTX_set_default_verify_paths(ctx) == 1 else { throw Self.failure("loading the system CA store") }
        }
        if let file = configuration.extraCAFile {
            guard SSL_CTX_load_verify_locations(ctx, file, nil) == 1 else { throw Self.failure("loading CA file \(file)") }
        }
        let alpn: [UInt8] = [2, UInt8(ascii: "h"), UInt8(ascii: "2")]
        // Inverted convention: 0 means success.
        guard SSL_CTX_set_alpn_protos(ctx, alpn, UInt32(alpn.count)) == 0 else { throw Self.failure("setting ALPN") }
        if let identity = configuration.identity {
            try Self.use(identity, in: ctx)
        }
    }

    deinit { SSL_CTX_free(raw) }

    /// The SSL_OP_* options set on the context, for tests.
    var options: UInt64 { SSL_CTX_get_options(raw) }

    static var noRenegotiationOption: UInt64 { pw_SSL_OP_NO_RENEGOTIATION() }

    private static func failure(_ step: String) -> HTTP2Error {
        HTTP2Error(code: .tlsFailed, message: "\(step) failed: \(OpenSSLError.drain())")
    }

    static func use(_ identity: TLSClientIdentity, in ctx: OpaquePointer) throws(HTTP2Error) {
        switch identity.source {
        case let .pem(certificateFile, privateKeyFile, password):
            guard SSL_CTX_use_certificate_chain_file(ctx, certificateFile) == 1 else {
                throw failure("loading certificate chain \(certificateFile)")
            }
            guard let bio = BIO_new_file(privateKeyFile, "r") else { throw failure("opening key \(privateKeyFile)") }
            defer { BIO_free(bio) }
            // With no callback, the user pointer is taken as the NUL-terminated passphrase; without a
            // password, a callback that refuses (OpenSSL's default would prompt on the terminal).
            var encrypted: Int32 = 0
            let key: OpaquePointer? = if let password {
                password.withCString { PEM_read_bio_PrivateKey(bio, nil, nil, UnsafeMutableRawPointer(mutating: $0)) }
            } else {
                PEM_read_bio_PrivateKey(bio, nil, pw_pem_refuse_passphrase, &encrypted)
            }
            guard let key else {
                if encrypted != 0 {
                    _ = OpenSSLError.drain()
                    throw HTTP2Error(code: .tlsFailed, message: "the key \(privateKeyFile) is encrypted and no password was given")
                }
                throw failure("reading key \(privateKeyFile)")
            }
            defer { EVP_PKEY_free(key) }
            guard SSL_CTX_use_PrivateKey(ctx, key) == 1 else { throw failure("using key \(privateKeyFile) with the certificate in \(certificateFile)") }
        case let .pkcs12(file, password):
            LegacyProviders.loadOnce()
            guard let bio = BIO_new_file(file, "rb") else { throw failure("opening PKCS#12 \(file)") }
            defer { BIO_free(bio) }
            guard let p12 = d2i_PKCS12_bio(bio, nil) else { throw failure("parsing PKCS#12 \(file)") }
            defer { PKCS12_free(p12) }
            var key: OpaquePointer?
            var certificate: OpaquePointer?
            var chain: OpaquePointer?
            guard PKCS12_parse(p12, password, &key, &certificate, &chain) == 1 else {
                throw failure("decrypting PKCS#12 \(file) (wrong password?)")
            }
            defer {
                EVP_PKEY_free(key)
                X509_free(certificate)
                if let chain { pw_sk_X509_pop_free(chain) }
            }
            guard let key, let certificate else {
                throw HTTP2Error(code: .tlsFailed, message: "PKCS#12 \(file) holds no certificate and key")
            }
            guard SSL_CTX_use_certificate(ctx, certificate) == 1 else { throw failure("using certificate from \(file)") }
            guard SSL_CTX_use_PrivateKey(ctx, key) == 1 else { throw failure("using key from \(file)") }
            if let chain {
                for index in 0..<pw_sk_X509_num(chain) {
                    guard pw_SSL_CTX_add1_chain_cert(ctx, pw_sk_X509_value(chain, index)) == 1 else {
                        throw failure("adding chain certificate from \(file)")
                    }
                }
            }
        }
        guard SSL_CTX_check_private_key(ctx) == 1 else { throw failure("matching the key to the certificate in \(identity.certificateFile)") }
    }
}

/// OpenSSL 3 cannot decrypt RC2/3DES PKCS#12 without the legacy provider; loading any provider
/// explicitly disables the implicit default one, so both are loaded, once per process.
enum LegacyProviders {
    private static let loaded: Bool = {
        let legacy = OSSL_PROVIDER_load(nil, "legacy")
        let standard = OSSL_PROVIDER_load(nil, "default")
        return legacy != nil && standard != nil
    }()

    static func loadOnce() { _ = loaded }
}
