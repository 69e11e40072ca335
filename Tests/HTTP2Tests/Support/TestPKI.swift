import Foundation

/// A throwaway PKI made with the openssl CLI: a trusted CA with a server certificate
/// (SAN DNS:localhost, IP:127.0.0.1) and a client certificate, plus a rogue CA whose server
/// certificate must be rejected.
struct TestPKI: Sendable {
    static let openssl = "/usr/bin/openssl"
    static let clientKeyPassword = "p@ss word"
    static let clientCommonName = "pushworker-test-client"

    let directory: String
    var caCertificate: String { directory + "/ca.pem" }
    var serverCertificate: String { directory + "/server.pem" }
    var serverKey: String { directory + "/server.key" }
    var clientCertificate: String { directory + "/client.pem" }
    var clientKeyEncrypted: String { directory + "/client-encrypted.key" }
    var clientPKCS12: String { directory + "/client.p12" }
    var clientLegacyPKCS12: String { directory + "/client-legacy.p12" }
    var rogueServerCertificate: String { directory + "/rogue-server.pem" }
    var rogueServerKey: String { directory + "/rogue-server.key" }
    var docroot: String { directory + "/docroot" }

    /// Made once per test run.
    static let shared: Result<TestPKI, TestFailure> = {
        do {
            return .success(try make())
        } catch let error as TestFailure {
            return .failure(error)
        } catch {
            return .failure(TestFailure("\(error)"))
        }
    }()

    static func get() throws -> TestPKI { try shared.get() }

    /// Earlier runs' PKIs (older than an hour) are removed; the current run's stays for debugging.
    private static func removeStaleDirectories() {
        let temporary = NSTemporaryDirectory()
        let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []
        for name in names where name.hasPrefix("pushworker-http2-tests-") {
            let path = temporary + name
            let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
            if let modified, modified < Date(timeIntervalSinceNow: -3600) {
                try? FileManager.default.removeItem(atPath: path)
            }
        }
    }

    private static func make() throws -> TestPKI {
        removeStaleDirectories()
        let directory = NSTemporaryDirectory() + "pushworker-http2-tests-\(getpid())"
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory + "/docroot", withIntermediateDirectories: true)
        try "hello from nghttpd\n".write(toFile: directory + "/docroot/hello.txt", atomically: true, encoding: .utf8)
        let pki = TestPKI(directory: directory)
        func path(_ name: String) -> String { directory + "/" + name }
        func ca(_ name: String, _ subject: String) throws {
            try ChildProcess.run(openssl, [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", path("\(name).key"), "-out", path("\(name).pem"), "-days", "2", "-subj", subject,
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ])
        }
        func leaf(_ name: String, _ subject: String, issuer: String, extensions: String) throws {
            try extensions.write(toFile: path("\(name).ext"), atomically: true, encoding: .utf8)
            try ChildProcess.run(openssl, [
                "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", path("\(name).key"), "-out", path("\(name).csr"), "-subj", subject,
            ])
            try ChildProcess.run(openssl, [
                "x509", "-req", "-in", path("\(name).csr"), "-CA", path("\(issuer).pem"), "-CAkey", path("\(issuer).key"),
                "-CAcreateserial", "-out", path("\(name).pem"), "-days", "2", "-extfile", path("\(name).ext"),
            ])
        }
        let serverExtensions = "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n"
        try ca("ca", "/CN=Pushworker Test CA")
        try ca("rogue-ca", "/CN=Rogue Test CA")
        try leaf("server", "/CN=localhost", issuer: "ca", extensions: serverExtensions)
        try leaf("rogue-server", "/CN=localhost", issuer: "rogue-ca", extensions: serverExtensions)
        try leaf("client", "/CN=\(clientCommonName)", issuer: "ca",
                 extensions: "extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n")
        try ChildProcess.run(openssl, [
            "pkey", "-in", path("client.key"), "-aes256", "-passout", "pass:\(clientKeyPassword)", "-out", pki.clientKeyEncrypted,
        ])
        try ChildProcess.run(openssl, [
            "pkcs12", "-export", "-in", pki.clientCertificate, "-inkey", path("client.key"), "-certfile", pki.caCertificate,
            "-passout", "pass:\(clientKeyPassword)", "-out", pki.clientPKCS12,
        ])
        // RC2/3DES, like old Keychain exports: needs OpenSSL's legacy provider to parse.
        try ChildProcess.run(openssl, [
            "pkcs12", "-export", "-legacy", "-in", pki.clientCertificate, "-inkey", path("client.key"),
            "-passout", "pass:\(clientKeyPassword)", "-out", pki.clientLegacyPKCS12,
        ])
        return pki
    }
}
