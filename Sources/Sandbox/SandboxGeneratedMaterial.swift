/// Files the sandbox creates in its state directory on first start and reuses afterwards, so a
/// restarted sandbox keeps its identity (clients keep trusting `ca.pem`, keys keep working).
public struct SandboxGeneratedMaterial: Sendable, Hashable {
    public static let defaultTokenKeyID = "SANDBOXKEY"
    public static let defaultTeamID = "SANDBOXTM1"
    /// The topic of the generated client certificate.
    public static let clientBundleID = "com.example.app"
    public static let clientPKCS12Password = "sandbox"

    /// Clients trust this (`--apns-ca-file`); it also signs accepted client certificates.
    public let caCertificateFile: String
    /// SAN: DNS localhost, IP 127.0.0.1 and ::1.
    public let serverCertificateFile: String
    public let serverPrivateKeyFile: String
    /// PKCS#8 PEM P-256 private key, like an APNs `.p8`.
    public let tokenKeyFile: String
    public let tokenKeyID: String
    public let teamID: String
    /// A client identity for `clientBundleID`, signed by the CA (certificate authentication).
    public let clientCertificateFile: String
    public let clientPrivateKeyFile: String
    /// The same identity as PKCS#12, password `clientPKCS12Password`.
    public let clientPKCS12File: String

    let caPrivateKeyFile: String

    public init(stateDirectory: String) {
        func file(_ name: String) -> String {
            stateDirectory.hasSuffix("/") ? stateDirectory + name : stateDirectory + "/" + name
        }
        self.caCertificateFile = file("ca.pem")
        self.caPrivateKeyFile = file("ca-key.pem")
        self.serverCertificateFile = file("server.pem")
        self.serverPrivateKeyFile = file("server-key.pem")
        self.tokenKeyFile = file("token-key.p8")
        self.tokenKeyID = Self.defaultTokenKeyID
        self.teamID = Self.defaultTeamID
        self.clientCertificateFile = file("client.pem")
        self.clientPrivateKeyFile = file("client-key.pem")
        self.clientPKCS12File = file("client.p12")
    }
}
