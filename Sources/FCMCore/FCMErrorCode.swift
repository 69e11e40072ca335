/// FCM's `FcmError.errorCode` values (Firebase, "ErrorCode" in the FCM v1 REST reference). A code
/// this list does not know (Google adds them) is `.unknown` with its text, never dropped.
public enum FCMErrorCode: Sendable, Hashable, CaseIterable, RawRepresentable {
    case unspecifiedError, invalidArgument, unregistered, senderIDMismatch, quotaExceeded, unavailable, internalError, thirdPartyAuthError
    case unknown(String)

    /// Every code Firebase documents (all but `.unknown`).
    public static let allCases: [FCMErrorCode] = [
        .unspecifiedError, .invalidArgument, .unregistered, .senderIDMismatch, .quotaExceeded, .unavailable, .internalError, .thirdPartyAuthError,
    ]

    private static let byText: [String: FCMErrorCode] = Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, $0) })

    public init(rawValue: String) {
        self = Self.byText[rawValue] ?? .unknown(rawValue)
    }

    public var rawValue: String {
        switch self {
        case .unspecifiedError: "UNSPECIFIED_ERROR"
        case .invalidArgument: "INVALID_ARGUMENT"
        case .unregistered: "UNREGISTERED"
        case .senderIDMismatch: "SENDER_ID_MISMATCH"
        case .quotaExceeded: "QUOTA_EXCEEDED"
        case .unavailable: "UNAVAILABLE"
        case .internalError: "INTERNAL"
        case .thirdPartyAuthError: "THIRD_PARTY_AUTH_ERROR"
        case let .unknown(text): text
        }
    }

    /// The HTTP status FCM pairs with the code; nil for UNSPECIFIED_ERROR and unknown codes.
    public var status: Int? {
        switch self {
        case .invalidArgument: 400
        case .thirdPartyAuthError: 401
        case .senderIDMismatch: 403
        case .unregistered: 404
        case .quotaExceeded: 429
        case .internalError: 500
        case .unavailable: 503
        case .unspecifiedError, .unknown: nil
        }
    }

    /// The google.rpc status name FCM sends with the code in `error.status`.
    public var rpcStatus: String? {
        switch self {
        case .invalidArgument: "INVALID_ARGUMENT"
        case .thirdPartyAuthError: "UNAUTHENTICATED"
        case .senderIDMismatch: "PERMISSION_DENIED"
        case .unregistered: "NOT_FOUND"
        case .quotaExceeded: "RESOURCE_EXHAUSTED"
        case .internalError: "INTERNAL"
        case .unavailable: "UNAVAILABLE"
        case .unspecifiedError, .unknown: nil
        }
    }
}
