import Foundation

/// Client certificates shaped like Apple's push certificates (subject UID = bundle ID, the topics
/// extension 1.2.840.113635.100.6.3.6), plus expired and not-yet-valid ones: made with the openssl
/// CLI (`openssl ca` sets any validity window), signed by the test CA.
struct APNsStyleCertificates: Sendable {
    static let bundleID = "com.example.app"
    static let topics = [bundleID, bundleID + ".voip", bundleID + ".complication"]

    let pki: TestPKI
    var pushCertificate: String { pki.directory + "/apns-push.pem" }
    var pushKey: String { pki.directory + "/apns-push.key" }
    var expiredCertificate: String { pki.directory + "/apns-expired.pem" }
    var futureCertificate: String { pki.directory + "/apns-future.pem" }
    /// Both issued for the push certificate's key.
    var key: String { pushKey }

    static let shared: Result<APNsStyleCertificates, TestFailure> = {
        do {
            return .success(try make(try TestPKI.get()))
        } catch let error as TestFailure {
            return .failure(error)
        } catch {
            return .failure(TestFailure("\(error)"))
        }
    }()

    static func get() throws -> APNsStyleCertificates { try shared.get() }

    /// SEQUENCE { UTF8String topic, SEQUENCE { UTF8String kind }, … } as Apple writes it.
    static func topicsDER(_ topics: [String]) -> [UInt8] {
        func element(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] { [tag, UInt8(content.count)] + content }
        let kinds = ["app", "voip", "complication"]
        var body: [UInt8] = []
        for (index, topic) in topics.enumerated() {
            body += element(0x0c, Array(topic.utf8)) + element(0x30, element(0x0c, Array(kinds[index % kinds.count].utf8)))
        }
        return element(0x30, body)
    }

    private static func make(_ pki: TestPKI) throws -> APNsStyleCertificates {
        let certificates = APNsStyleCertificates(pki: pki)
        let directory = pki.directory
        func path(_ name: String) -> String { directory + "/" + name }
        let hex = topicsDER(topics).map { String(format: "%02X", $0) }.joined()
        let extensions = "extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n1.2.840.113635.100.6.3.6=DER:\(hex)\n"
        try extensions.write(toFile: path("apns.ext"), atomically: true, encoding: .utf8)
        try ChildProcess.run(TestPKI.openssl, [
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", certificates.pushKey,
            "-out", path("apns.csr"), "-subj", "/UID=\(bundleID)/CN=Apple Push Services: \(bundleID)/OU=TEAMID1234/C=US",
        ])
        try ChildProcess.run(TestPKI.openssl, [
            "x509", "-req", "-in", path("apns.csr"), "-CA", pki.caCertificate, "-CAkey", path("ca.key"), "-CAcreateserial",
            "-out", certificates.pushCertificate, "-days", "2", "-extfile", path("apns.ext"),
        ])
        // `openssl ca` is the CLI that takes an explicit validity window.
        let config = """
        [ ca ]
        default_ca = test
        [ test ]
        database = \(path("ca-index.txt"))
        new_certs_dir = \(directory)
        serial = \(path("ca-serial"))
        default_md = sha256
        policy = anything
        unique_subject = no
        preserve = yes
        [ anything ]
        commonName = supplied
        """
        try config.write(toFile: path("ca.cnf"), atomically: true, encoding: .utf8)
        try "".write(toFile: path("ca-index.txt"), atomically: true, encoding: .utf8)
        try "1000\n".write(toFile: path("ca-serial"), atomically: true, encoding: .utf8)
        for (file, start, end) in [(certificates.expiredCertificate, "20200101000000Z", "20210101000000Z"),
                                   (certificates.futureCertificate, "20990101000000Z", "21000101000000Z")] {
            try ChildProcess.run(TestPKI.openssl, [
                "ca", "-batch", "-notext", "-config", path("ca.cnf"), "-cert", pki.caCertificate, "-keyfile", path("ca.key"),
                "-in", path("apns.csr"), "-out", file, "-startdate", start, "-enddate", end, "-extfile", path("apns.ext"),
            ])
        }
        return certificates
    }
}
