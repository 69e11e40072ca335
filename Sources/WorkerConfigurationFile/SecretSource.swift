import Foundation
import PushCore

/// Where a secret (a .p8 key, a password) comes from: never from the file's own text, so that
/// the file can be shared and checked in. Printing one shows where it comes from, never its value.
public enum SecretSource: Sendable, Hashable, CustomStringConvertible {
    /// The file's content (a trailing newline is dropped from passwords, not from keys).
    case file(String)
    /// An environment variable holding the secret, or its Base64 (for values that do not fit in
    /// a variable as text, like a PKCS#12 file or a multi-line key).
    case environment(String, base64: Bool)

    public var description: String {
        switch self {
        case let .file(path): "{file: \(path)}"
        case let .environment(name, base64): base64 ? "{env: \(name), base64: true} ***" : "{env: \(name)} ***"
        }
    }

    /// The secret's bytes, or a message saying what is missing (never the value).
    func bytes(environment: [String: String]) -> Result<[UInt8], SecretError> {
        switch self {
        case let .file(path):
            guard let bytes = FileBytes.contents(of: path) else { return .failure(SecretError("cannot read \(path)")) }
            return .success(bytes)
        case let .environment(name, base64):
            guard let value = environment[name], !value.isEmpty else {
                return .failure(SecretError("the environment variable \(name) is not set"))
            }
            guard base64 else { return .success(Array(value.utf8)) }
            let compact = value.filter { !$0.isWhitespace }
            guard let data = Data(base64Encoded: compact) else {
                return .failure(SecretError("the environment variable \(name) is not valid Base64"))
            }
            return .success(Array(data))
        }
    }

    /// A password: text, without the newline an editor or `echo` adds at the end.
    func text(environment: [String: String]) -> Result<String, SecretError> {
        bytes(environment: environment).flatMap { bytes in
            guard var text = String(validating: bytes, as: UTF8.self) else { return .failure(SecretError("is not UTF-8 text")) }
            while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }
            return .success(text)
        }
    }
}

struct SecretError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
