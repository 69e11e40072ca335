import Foundation
import PushCore
import NIOConcurrencyHelpers

/// Mints and caches the provider token (JWT) for one key. APNs rejects tokens older than an hour
/// and answers 429 TooManyProviderTokenUpdates when a connection's token changes more often than
/// every 20 minutes, so one token is shared by every connection and replaced after `refreshAfter`.
public final class APNsTokenProvider: Sendable {
    public let keyID: String
    public let teamID: String
    private let signer: ES256Signer
    private let refreshAfter: Duration
    private static let minimumLifetime: Duration = .seconds(20 * 60)
    private let state = NIOLockedValueBox<State>(State())

    private struct State {
        var header: String?
        var issuedAt: Int = 0
        var mintedAt: ContinuousClock.Instant?
    }

    /// - Parameter refreshAfter: clamped to 20…50 minutes (Apple: refresh no more often than every
    ///   20 minutes and no less often than every 60).
    public init(keyPEM: [UInt8], keyID: String, teamID: String, refreshAfter: Duration = .seconds(40 * 60)) throws(APNsConfigurationError) {
        guard keyID.count == 10, keyID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw APNsConfigurationError("apns-key-id must be the 10-character Key ID from Apple's developer account, got \(keyID.count) characters")
        }
        guard teamID.count == 10, teamID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw APNsConfigurationError("apns-team-id must be the 10-character Team ID, got \(teamID.count) characters")
        }
        self.keyID = keyID
        self.teamID = teamID
        self.signer = try ES256Signer(pem: keyPEM)
        self.refreshAfter = min(max(refreshAfter, Self.minimumLifetime), .seconds(50 * 60))
        _ = try authorizationHeader()
    }

    public convenience init(keyFile: String, keyID: String, teamID: String) throws(APNsConfigurationError) {
        guard let data = FileManager.default.contents(atPath: keyFile) else {
            throw APNsConfigurationError("apns-key-file: cannot read \(keyFile)")
        }
        do {
            try self.init(keyPEM: Array(data), keyID: keyID, teamID: teamID)
        } catch {
            throw APNsConfigurationError("apns-key-file \(keyFile): \(error.message)")
        }
    }

    /// `bearer <jwt>`, minted again once the cached one is `refreshAfter` old.
    public func authorizationHeader() throws(APNsConfigurationError) -> String {
        let now = ContinuousClock.now
        let cached: String? = state.withLockedValue { state in
            guard let header = state.header, let minted = state.mintedAt, now - minted < refreshAfter else { return nil }
            return header
        }
        if let cached { return cached }
        return try mint(now: now)
    }

    /// After APNs rejected the token (ExpiredProviderToken / InvalidProviderToken): mint a new one
    /// unless the current one is younger than 20 minutes, which APNs would punish with 429.
    /// Returns whether a new token was made.
    public func refreshAfterRejection() throws(APNsConfigurationError) -> Bool {
        let now = ContinuousClock.now
        let allowed = state.withLockedValue { state in
            guard let minted = state.mintedAt else { return true }
            return now - minted >= Self.minimumLifetime
        }
        guard allowed else { return false }
        _ = try mint(now: now)
        return true
    }

    private func mint(now: ContinuousClock.Instant) throws(APNsConfigurationError) -> String {
        let issuedAt = Int(Date().timeIntervalSince1970)
        let header = Base64.encode(Array("{\"alg\":\"ES256\",\"kid\":\"\(keyID)\"}".utf8), urlSafe: true, padded: false)
        let claims = Base64.encode(Array("{\"iss\":\"\(teamID)\",\"iat\":\(issuedAt)}".utf8), urlSafe: true, padded: false)
        let signingInput = header + "." + claims
        let signature = try signer.sign(Array(signingInput.utf8))
        let token = signingInput + "." + Base64.encode(signature, urlSafe: true, padded: false)
        let value = "bearer " + token
        state.withLockedValue { state in
            state.header = value
            state.issuedAt = issuedAt
            state.mintedAt = now
        }
        return value
    }
}
