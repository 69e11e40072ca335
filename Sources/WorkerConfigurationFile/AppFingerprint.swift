import PushCore

/// Whether a reload must give an app a new client: its entry as written, and the bytes of every
/// file and secret the entry names (a key or certificate rotated in place keeps its path).
/// Compared, never printed: it holds secrets.
public struct AppFingerprint: Equatable, Sendable {
    private let entry: AppEntry
    private let material: [[UInt8]?]

    init(_ app: AppEntry, environment: [String: String]) {
        entry = app
        func read(_ source: SecretSource?) -> [UInt8]? { try? source?.bytes(environment: environment).get() }
        var files: [String?] = [app.caFile]
        var secrets: [SecretSource?] = []
        switch app.credentials {
        case let .token(key, _, _): secrets = [key]
        case let .certificate(certificateFile, keyFile, password):
            files += [certificateFile, keyFile]
            secrets = [password]
        case let .pkcs12(file, password):
            files.append(file)
            secrets = [password]
        case let .vapid(key, _, _): secrets = [key]
        case let .serviceAccount(source): secrets = [source]
        }
        material = files.map { $0.flatMap(FileBytes.contents(of:)) } + secrets.map(read)
    }
}
