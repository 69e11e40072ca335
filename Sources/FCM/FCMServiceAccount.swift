import PushCore

/// A Google service account's key file (the JSON Firebase's console downloads), the members the
/// OAuth JWT grant needs (Google, "Using OAuth 2.0 for Server to Server Applications"). Its
/// description names the account, never the key.
public struct FCMServiceAccount: Sendable, CustomStringConvertible {
    public let projectID: String
    public let privateKeyID: String
    public let clientEmail: String
    /// Where access tokens are asked for (`https://oauth2.googleapis.com/token`).
    public let tokenURI: String
    let signer: OpenSSLRS256Signer

    /// The members read, in the order their problems are reported.
    static let requiredMembers = ["type", "project_id", "private_key_id", "private_key", "client_email", "token_uri"]

    /// Reads the key file's JSON. Every problem names the JSON member and what is wrong with it.
    public init(json: [UInt8]) throws(FCMConfigurationError) {
        guard case let .object(members)? = try? JSONValue.parse(json) else {
            throw FCMConfigurationError(field: nil, "the service-account file is not a JSON object (expected the key file downloaded from the Firebase console)")
        }
        func string(_ name: String) throws(FCMConfigurationError) -> String {
            guard let value = members[name] else { throw FCMConfigurationError(field: name, "is missing") }
            guard case let .string(text) = value else { throw FCMConfigurationError(field: name, "must be a string, got \(value.typeName)") }
            guard !text.isEmpty else { throw FCMConfigurationError(field: name, "is empty") }
            return text
        }
        let type = try string("type")
        guard type == "service_account" else {
            throw FCMConfigurationError(field: "type", "must be \"service_account\", got \"\(type.prefix(40))\" (an OAuth client or user credentials file cannot send)")
        }
        projectID = try string("project_id")
        guard projectID.utf8.allSatisfy(Self.isProjectIDByte) else {
            throw FCMConfigurationError(field: "project_id", "must be a Google Cloud project ID (a–z, 0–9, '-', ':', '.'), got \"\(projectID.prefix(64))\"")
        }
        privateKeyID = try string("private_key_id")
        guard privateKeyID.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) else {
            throw FCMConfigurationError(field: "private_key_id", "must be printable ASCII without spaces or quotes")
        }
        let privateKey = try string("private_key")
        do {
            signer = try OpenSSLRS256Signer(pem: Array(privateKey.utf8))
        } catch {
            throw FCMConfigurationError(field: "private_key", error.message)
        }
        clientEmail = try string("client_email")
        guard clientEmail.contains("@"), !clientEmail.contains(where: { $0 == " " || $0 == "\"" || $0 == "\\" }) else {
            throw FCMConfigurationError(field: "client_email", "must be the service account's e-mail address, got \"\(clientEmail.prefix(80))\"")
        }
        tokenURI = try string("token_uri")
        do throws(ServiceURLError) {
            let url = try ServiceURL(parsing: tokenURI, schemes: ["https"])
            guard !url.host.isEmpty else { throw ServiceURLError("no host") }
        } catch {
            throw FCMConfigurationError(field: "token_uri", "must be an https URL such as https://oauth2.googleapis.com/token (\(error.message))")
        }
    }

    /// Reads the key file at `path`; errors name the file and the member.
    public init(contentsOfFile path: String) throws(FCMConfigurationError) {
        guard let bytes = FileBytes.contents(of: path) else {
            throw FCMConfigurationError(field: "service-account file", "cannot read \(path)")
        }
        do {
            try self.init(json: bytes)
        } catch {
            throw FCMConfigurationError(field: "\(path): " + (error.field ?? "service account"), error.problem)
        }
    }

    /// The RS256 signature of `message` with the account's key.
    func sign(_ message: [UInt8]) throws(FCMConfigurationError) -> [UInt8] {
        do { return try signer.sign(message) } catch { throw FCMConfigurationError(field: "private_key", error.message) }
    }

    /// The public half of the key (PEM): what a verifier needs, never the key itself.
    public var publicKeyPEM: String { signer.publicKeyPEM() }

    public var description: String { "service account \(clientEmail) (project \(projectID), key \(privateKeyID))" }

    private static func isProjectIDByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: ":"), UInt8(ascii: "."): true
        default: false
        }
    }
}
