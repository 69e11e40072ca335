import NIOConcurrencyHelpers

/// Encryptors for the threads that send: each use takes one out and puts it back, so no two
/// threads share one (an encryptor keeps OpenSSL contexts between messages and is not
/// thread-safe), and there are never more than threads sending at once.
final class WebPushEncryptorPool: Sendable {
    /// Owned by whoever took it out of the pool: only one thread uses it at a time.
    private final class Lent: @unchecked Sendable {
        let encryptor: WebPushMessageEncryptor
        init(_ encryptor: WebPushMessageEncryptor) { self.encryptor = encryptor }
    }

    private let idle = NIOLockedValueBox<[Lent]>([])

    func withEncryptor<Result>(_ body: (WebPushMessageEncryptor) throws(WebPushError) -> Result) throws(WebPushError) -> Result {
        let lent: Lent
        if let reused = idle.withLockedValue({ $0.popLast() }) { lent = reused } else { lent = Lent(try WebPushMessageEncryptor()) }
        defer { idle.withLockedValue { $0.append(lent) } }
        return try body(lent.encryptor)
    }
}
