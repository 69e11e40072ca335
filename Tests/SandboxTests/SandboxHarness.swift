import Crypto
import Foundation
import Logging
import Sandbox

/// A sandbox on an ephemeral loopback port with its own state directory, plus the client-side
/// pieces the tests need: a provider token minted with swift-crypto and curl invocations.
struct SandboxHarness {
    let sandbox: APNsSandbox
    let port: Int
    let directory: String
    var material: SandboxGeneratedMaterial { self.sandbox.material }

    static let token = String(repeating: "ab", count: 32)
    static let payload = #"{"aps":{"alert":"hello"}}"#

    static func start(_ configure: (inout SandboxConfiguration) -> Void = { _ in }) async throws -> SandboxHarness {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sandbox-test-\(UUID().uuidString)").path
        var configuration = SandboxConfiguration()
        configuration.port = 0
        configuration.stateDirectory = directory
        configuration.threads = 2
        configure(&configuration)
        var logger = Logger(label: "sandbox-test")
        logger.logLevel = .warning
        let sandbox = APNsSandbox(configuration: configuration, logger: logger)
        let port = try await sandbox.start()
        return SandboxHarness(sandbox: sandbox, port: port, directory: directory)
    }

    func stop() async {
        await self.sandbox.stop()
        try? FileManager.default.removeItem(atPath: self.directory)
    }

    var baseURL: String { "https://127.0.0.1:\(self.port)" }

    func baseURL(port: Int?) -> String { "https://127.0.0.1:\(port ?? self.port)" }

    func url(token: String = Self.token) -> String { "\(self.baseURL)/3/device/\(token)" }

    /// An APNs provider token signed with the generated `.p8` (or any P-256 PEM).
    func providerToken(keyID: String? = nil, teamID: String? = nil, issuedAt: Date = Date(), keyFile: String? = nil) throws -> String {
        let pem = try String(contentsOfFile: keyFile ?? self.material.tokenKeyFile, encoding: .utf8)
        let key = try P256.Signing.PrivateKey(pemRepresentation: pem)
        let header = #"{"alg":"ES256","kid":"\#(keyID ?? self.material.tokenKeyID)"}"#
        let claims = #"{"iss":"\#(teamID ?? self.material.teamID)","iat":\#(Int(issuedAt.timeIntervalSince1970))}"#
        let input = Self.base64URL(Data(header.utf8)) + "." + Self.base64URL(Data(claims.utf8))
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + Self.base64URL(signature.rawRepresentation)
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The answer as curl saw it over a verified TLS connection (curl trusts only the sandbox CA).
    struct Response {
        let status: Int
        let headers: [String: String]
        let body: String
        let curl: ExternalTool.Result

        var reason: String? {
            (try? JSONSerialization.jsonObject(with: Data(self.body.utf8)) as? [String: Any])?["reason"] as? String
        }
    }

    /// Standard APNs headers unless overridden; pass a nil value to leave a header out. `port`:
    /// another listener of the sandbox (channel management).
    func post(
        token: String = Self.token,
        headers: [String: String?] = [:],
        body: String? = Self.payload,
        method: String = "POST",
        path: String? = nil,
        port: Int? = nil,
        extraArguments: [String] = [],
        maxTime: Int = 20
    ) async throws -> Response {
        var all: [String: String?] = [
            "authorization": "bearer \(try self.providerToken())",
            "apns-topic": "com.example.app",
            "apns-push-type": "alert",
        ]
        for (name, value) in headers { all[name] = value }
        var arguments = ["--http2", "-sS", "-i", "--cacert", self.material.caCertificateFile, "--max-time", "\(maxTime)", "-X", method]
        for (name, value) in all.sorted(by: { $0.key < $1.key }) {
            if let value { arguments += ["-H", "\(name): \(value)"] }
        }
        if let body { arguments += ["--data-binary", body] }
        arguments += extraArguments
        arguments.append(path.map { self.baseURL(port: port) + $0 } ?? self.url(token: token))
        let result = try await ExternalTool.run("curl", arguments)
        return Self.parse(result)
    }

    static func parse(_ result: ExternalTool.Result) -> Response {
        let text = result.stdout
        guard let split = text.range(of: "\r\n\r\n") else {
            return Response(status: 0, headers: [:], body: "", curl: result)
        }
        let head = text[..<split.lowerBound].split(separator: "\r\n")
        let status = head.first.flatMap { $0.split(separator: " ").dropFirst().first }.flatMap { Int($0) } ?? 0
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Response(status: status, headers: headers, body: String(text[split.upperBound...]), curl: result)
    }

    /// Writes a body file for nghttp/h2load.
    func writeFile(_ name: String, _ contents: String) throws -> String {
        let path = "\(self.directory)/\(name)"
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}

extension SandboxHarness {
    /// Runs `body` against a fresh sandbox and always stops it, also when the body throws.
    static func with(
        _ configure: (inout SandboxConfiguration) -> Void = { _ in },
        _ body: (SandboxHarness) async throws -> Void
    ) async throws {
        let harness = try await self.start(configure)
        do {
            try await body(harness)
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }
}
