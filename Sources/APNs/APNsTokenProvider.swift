import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PushCore
import NIOConcurrencyHelpers

/// Mints and caches the provider token (JWT) for one key. APNs rejects tokens older than an hour
/// and answers 429 TooManyProviderTokenUpdates when a connection's token changes more often than
/// every 20 minutes, so one token is shared by every connection and replaced after `refreshAfter`.
public final class APNsTokenProvider: Sendable {
    /// The time source: the monotonic clock for the 20-minute rule, the wall clock for `iat`.
    /// Injectable so that tests check the refresh rules without waiting 20 minutes.
    public struct Clock: Sendable {
        public var monotonic: @Sendable () -> ContinuousClock.Instant
        public var unixSeconds: @Sendable () -> Int

        public static let system = Clock(monotonic: { .now }, unixSeconds: { Int(time(nil)) })

        public init(monotonic: @escaping @Sendable () -> ContinuousClock.Instant, unixSeconds: @escaping @Sendable () -> Int) {
            self.monotonic = monotonic
            self.unixSeconds = unixSeconds
        }
    }

    public let keyID: String
    public let teamID: String
    private let signer: ES256Signer
    /// The key's public half (DER): tells keys with the same Key ID apart (a regenerated sandbox
    /// key, a key file replaced by mistake) without revealing the key.
    public let publicKey: [UInt8]
    private let refreshAfter: Duration
    private let clock: Clock
    private static let minimumLifetime: Duration = .seconds(20 * 60)
    /// A token handed in from outside is replaced here only past this age: whoever hands tokens in
    /// has stopped doing so, and APNs refuses tokens older than an hour.
    private static let externalTokenCeiling = 55 * 60
    private let state = NIOLockedValueBox<State>(State())
    /// Tokens put in use (signed here or installed from the fleet's shared one), for the metrics.
    private let tokensInUse = Atomic<Int>(0)
    public var tokenChanges: Int { tokensInUse.load(ordering: .relaxed) }

    private struct State {
        var header: String?
        var issuedAt: Int = 0
        var mintedAt: ContinuousClock.Instant?
        /// Set by `refreshExternally`: the youngest token a rejection may replace, in seconds.
        var externalMinimumAge: Int?
    }

    /// - Parameter refreshAfter: clamped to 20…50 minutes (Apple: refresh no more often than every
    ///   20 minutes and no less often than every 60).
    public init(keyPEM: [UInt8], keyID: String, teamID: String, refreshAfter: Duration = .seconds(40 * 60), clock: Clock = .system) throws(APNsConfigurationError) {
        guard keyID.count == 10, keyID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw APNsConfigurationError("apns-key-id must be the 10-character Key ID from Apple's developer account, got \(keyID.count) characters")
        }
        guard teamID.count == 10, teamID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw APNsConfigurationError("apns-team-id must be the 10-character Team ID, got \(teamID.count) characters")
        }
        self.keyID = keyID
        self.teamID = teamID
        self.signer = try ES256Signer(pem: keyPEM)
        self.publicKey = signer.publicKeyDER()
        self.refreshAfter = min(max(refreshAfter, Self.minimumLifetime), .seconds(50 * 60))
        self.clock = clock
        _ = try authorizationHeader()
    }

    public convenience init(keyFile: String, keyID: String, teamID: String) throws(APNsConfigurationError) {
        guard let data = FileBytes.contents(of: keyFile) else {
            throw APNsConfigurationError("apns-key-file: cannot read \(keyFile)")
        }
        do {
            try self.init(keyPEM: data, keyID: keyID, teamID: teamID)
        } catch {
            throw APNsConfigurationError("apns-key-file \(keyFile): \(error.message)")
        }
    }

    /// `bearer <jwt>`, minted again once the cached one is `refreshAfter` old.
    ///
    /// The check and the mint happen under one lock: two connections asking at once must get the
    /// same token, or APNs sees two tokens within milliseconds and answers TooManyProviderTokenUpdates.
    /// Minting (one ECDSA signature, ~0.1 ms) happens every 40 minutes, so the lock is almost never contended.
    public func authorizationHeader() throws(APNsConfigurationError) -> String {
        let header: Result<String, APNsConfigurationError> = state.withLockedValue { state in
            let now = clock.monotonic()
            if let header = state.header {
                if state.externalMinimumAge != nil {
                    if clock.unixSeconds() - state.issuedAt < Self.externalTokenCeiling { return .success(header) }
                } else if let minted = state.mintedAt, now - minted < refreshAfter {
                    return .success(header)
                }
            }
            return Result { () throws(APNsConfigurationError) in try mint(into: &state, now: now) }
        }
        return try header.get()
    }

    /// After APNs rejected the token (ExpiredProviderToken / InvalidProviderToken): mint a new one
    /// unless the current one is younger than 20 minutes, which APNs would punish with 429.
    /// Returns whether a new token was made; of many callers at once, at most one gets `true`.
    public func refreshAfterRejection() throws(APNsConfigurationError) -> Bool {
        let refreshed: Result<Bool, APNsConfigurationError> = state.withLockedValue { state in
            let now = clock.monotonic()
            if let minimumAge = state.externalMinimumAge {
                if clock.unixSeconds() - state.issuedAt < minimumAge { return .success(false) }
            } else if let minted = state.mintedAt, now - minted < Self.minimumLifetime {
                return .success(false)
            }
            return Result { () throws(APNsConfigurationError) in _ = try mint(into: &state, now: now); return true }
        }
        return try refreshed.get()
    }

    /// Whether `other` makes tokens APNs takes the same way: same team, Key ID and key.
    public func hasSameKey(as other: APNsTokenProvider) -> Bool {
        teamID == other.teamID && keyID == other.keyID && publicKey == other.publicKey
    }

    /// From now on the token is refreshed by someone else (the worker's token shared through
    /// Redis) through `install`: this provider stops replacing it after `refreshAfter` and mints
    /// on its own only for a token older than 55 minutes, or after a rejection of a token at least
    /// `minimumAge` old.
    public func refreshExternally(minimumAge: Duration) {
        let seconds = Int(minimumAge.components.seconds)
        state.withLockedValue { $0.externalMinimumAge = max(seconds, 1) }
    }

    /// Makes `jwt` (issued at `issuedAt`, Unix seconds) the token every connection uses from now on.
    public func install(jwt: String, issuedAt: Int) {
        let header = "bearer " + jwt
        let now = clock.monotonic()
        let changed = state.withLockedValue { state in
            defer {
                state.header = header
                state.issuedAt = issuedAt
                state.mintedAt = now
            }
            return state.header != header
        }
        if changed { tokensInUse.add(1, ordering: .relaxed) }
    }

    /// A newly signed token (without `bearer `) and its `iat`; the one in use stays until `install`.
    public func mintToken() throws(APNsConfigurationError) -> (jwt: String, issuedAt: Int) {
        let issuedAt = clock.unixSeconds()
        return (try signedToken(issuedAt: issuedAt), issuedAt)
    }

    private func mint(into state: inout State, now: ContinuousClock.Instant) throws(APNsConfigurationError) -> String {
        let issuedAt = clock.unixSeconds()
        let value = "bearer " + (try signedToken(issuedAt: issuedAt))
        state.header = value
        state.issuedAt = issuedAt
        state.mintedAt = now
        tokensInUse.add(1, ordering: .relaxed)
        return value
    }

    /// What is wrong with a provider token found in a shared store, or nil when APNs would take it
    /// from this key: ES256 signed by this key, `kid` this Key ID, `iss` this Team ID, and `iat`
    /// equal to `issuedAt`, at most 55 minutes old and at most a minute ahead of `now` (Unix
    /// seconds). Whoever can write the store could otherwise stop every worker's APNs sends.
    public func problem(withToken jwt: String, issuedAt: Int, now: Int) -> String? {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let headerBytes = Base64.decode(String(parts[0])),
              let claimBytes = Base64.decode(String(parts[1])),
              let signature = Base64.decode(String(parts[2])) else {
            return "it is not a JWT (three base64url parts)"
        }
        guard case .object(let header)? = try? JSONValue.parse(headerBytes),
              case .object(let claims)? = try? JSONValue.parse(claimBytes) else {
            return "its header or claims are not JSON objects"
        }
        guard header["alg"] == .string("ES256") else { return "its alg is not ES256" }
        guard header["kid"] == .string(keyID) else { return "its kid is not this app's Key ID \(keyID)" }
        guard claims["iss"] == .string(teamID) else { return "its iss is not this app's Team ID \(teamID)" }
        guard let iat = claims["iat"]?.exactInteger, iat == issuedAt else { return "its iat does not match the stored issue time" }
        guard iat <= now + 60 else { return "it was issued \(iat - now) s in the future (a clock ahead, or a forged value)" }
        guard iat >= now - Self.externalTokenCeiling else { return "it is \((now - iat) / 60) minutes old" }
        guard signer.verify(Array("\(parts[0]).\(parts[1])".utf8), signature: signature) else {
            return "its signature is not this app's key's"
        }
        return nil
    }

    private func signedToken(issuedAt: Int) throws(APNsConfigurationError) -> String {
        let header = Base64.encode(Array("{\"alg\":\"ES256\",\"kid\":\"\(keyID)\"}".utf8), urlSafe: true, padded: false)
        let claims = Base64.encode(Array("{\"iss\":\"\(teamID)\",\"iat\":\(issuedAt)}".utf8), urlSafe: true, padded: false)
        let signingInput = header + "." + claims
        let signature = try signer.sign(Array(signingInput.utf8))
        return signingInput + "." + Base64.encode(signature, urlSafe: true, padded: false)
    }
}
