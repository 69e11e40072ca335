import Foundation
import NIOCore
import NIOSSL

enum SandboxTLS {
    /// TLS 1.2+, ALPN `protocols` (h2 only, as APNs, by default). Client certificates are requested, not required, and must chain to
    /// the sandbox CA when present: that is what tells certificate from token authentication.
    static func makeContext(certificateFile: String, privateKeyFile: String, clientCAFile: String, protocols: [String] = ["h2"]) throws -> NIOSSLContext {
        do {
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMFile(certificateFile).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(file: privateKeyFile, format: .pem))
            )
            configuration.minimumTLSVersion = .tlsv12
            configuration.applicationProtocols = protocols
            configuration.certificateVerification = .optionalVerification
            configuration.trustRoots = .file(clientCAFile)
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw SandboxError(message: "TLS setup with \(certificateFile): \(error)")
        }
    }

    static func readFile(_ path: String) throws -> String {
        do {
            return try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw SandboxError(message: "cannot read \(path)")
        }
    }
}
