/// Why a Web Push message or a VAPID token cannot be made. Names the field at fault (`keys.p256dh`,
/// `vapid.subject`) so a job's publisher or an operator can fix it; never holds a key or secret.
public struct WebPushError: Error, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// A subscription's `p256dh` or `auth` is malformed.
        public static let invalidSubscriptionKey = Code("invalidSubscriptionKey")
        /// The plaintext does not fit the one record a push service must accept.
        public static let payloadTooLarge = Code("payloadTooLarge")
        /// The VAPID private key is not a P-256 scalar.
        public static let invalidVAPIDKey = Code("invalidVAPIDKey")
        /// The VAPID `sub` claim would be refused by a push service.
        public static let invalidVAPIDSubject = Code("invalidVAPIDSubject")
        /// The subscription's endpoint has no origin to put in `aud`.
        public static let invalidEndpoint = Code("invalidEndpoint")
        /// OpenSSL failed where valid input should not fail (memory, a missing provider).
        public static let library = Code("library")
    }

    public let code: Code
    /// The field at fault (`keys.p256dh`, `keys.auth`, `payload`, `vapid.subject`), when one is.
    public let field: String?
    public let message: String
    /// Where the error was raised, for reports from the field.
    public let location: String

    init(_ code: Code, field: String? = nil, _ message: String, fileID: String = #fileID, line: Int = #line) {
        self.code = code
        self.field = field
        self.message = message
        self.location = "\(fileID):\(line)"
    }

    public var description: String {
        guard let field else { return "Web Push \(code): \(message)" }
        return "Web Push \(code): \(field): \(message)"
    }
}
