internal import COpenSSL

/// What a worker prints and checks about its client certificate before it connects.
public struct CertificateSummary: Sendable, Hashable {
    public init(bundleID: String?, commonName: String?, topics: [String], validUntil: String) {
        self.bundleID = bundleID
        self.commonName = commonName
        self.topics = topics
        self.validUntil = validUntil
    }

    /// The subject's UID: the app's bundle ID in an APNs certificate.
    public var bundleID: String?
    public var commonName: String?
    /// From the APNs topics extension, when the certificate has one (otherwise just the bundle ID).
    public var topics: [String]
    /// notAfter, as `YYYY-MM-DD HH:MM:SS UTC`.
    public var validUntil: String
}

extension TLSClientIdentity {
    /// Loads the certificate and key exactly as a connection would, and refuses, naming the file,
    /// one that cannot be used: unreadable, malformed, a key that does not match, expired or not yet valid.
    public func inspect() throws(HTTP2Error) -> CertificateSummary {
        guard let ctx = SSL_CTX_new(TLS_client_method()) else {
            throw HTTP2Error(code: .tlsFailed, message: "SSL_CTX_new failed: \(OpenSSLError.drain())")
        }
        defer { SSL_CTX_free(ctx) }
        try TLSContext.use(self, in: ctx)
        let file = certificateFile
        guard let certificate = SSL_CTX_get0_certificate(ctx) else {
            throw HTTP2Error(code: .tlsFailed, message: "\(file) holds no certificate")
        }
        let notAfter = X509_get0_notAfter(certificate)
        let validUntil = Self.text(notAfter)
        if X509_cmp_current_time(notAfter) <= 0 {
            throw HTTP2Error(code: .tlsFailed, message: "the certificate in \(file) expired on \(validUntil): renew it in Apple's developer account")
        }
        let notBefore = X509_get0_notBefore(certificate)
        if X509_cmp_current_time(notBefore) >= 0 {
            throw HTTP2Error(code: .tlsFailed, message: "the certificate in \(file) is not valid before \(Self.text(notBefore)) (is the clock right?)")
        }
        let subject = X509_get_subject_name(certificate)
        let bundleID = Self.entry(subject, nid: NID_userId)
        var topics = Self.topicsExtension(certificate) ?? []
        if topics.isEmpty, let bundleID { topics = [bundleID] }
        return CertificateSummary(bundleID: bundleID, commonName: Self.entry(subject, nid: NID_commonName),
                                  topics: topics, validUntil: validUntil)
    }

    var certificateFile: String {
        switch source {
        case let .pem(certificateFile, _, _): certificateFile
        case let .pkcs12(file, _): file
        }
    }

    private static func entry(_ name: OpaquePointer?, nid: Int32) -> String? {
        let index = X509_NAME_get_index_by_NID(name, nid, -1)
        guard index >= 0, let data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, index)),
              let bytes = ASN1_STRING_get0_data(data) else { return nil }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(ASN1_STRING_length(data))), as: UTF8.self)
    }

    private static func topicsExtension(_ certificate: OpaquePointer) -> [String]? {
        guard let oid = OBJ_txt2obj(CertificateTopics.extensionOID, 1) else { return nil }
        defer { ASN1_OBJECT_free(oid) }
        let index = X509_get_ext_by_OBJ(certificate, oid, -1)
        guard index >= 0, let data = X509_EXTENSION_get_data(X509_get_ext(certificate, index)),
              let bytes = ASN1_STRING_get0_data(data) else { return nil }
        return CertificateTopics.parse(Array(UnsafeBufferPointer(start: bytes, count: Int(ASN1_STRING_length(data)))))
    }

    private static func text(_ time: UnsafePointer<ASN1_TIME>?) -> String {
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else { return "an unreadable date" }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) UTC"
    }
}
