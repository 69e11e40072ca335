import Foundation
import HTTP2

/// When an app's client certificate stops working, and the warning to give in the last 30 days:
/// APNs refuses an expired certificate for every notification, so it is better said early.
public struct CertificateExpiry: Sendable, Hashable {
    public static let warningWindow: TimeInterval = 30 * 86_400

    public var app: String
    public var file: String
    public var validUntil: Date

    public init(app: String, file: String, validUntil: Date) {
        self.app = app
        self.file = file
        self.validUntil = validUntil
    }

    /// From `CertificateSummary.validUntil` (`2027-03-01 12:00:00 UTC`).
    public init?(app: String, file: String, summary: CertificateSummary) {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        guard let date = formatter.date(from: summary.validUntil) else { return nil }
        self.init(app: app, file: file, validUntil: date)
    }

    /// Days left, to the nearest day.
    public func daysLeft(now: Date) -> Int { Int((validUntil.timeIntervalSince(now) / 86_400).rounded()) }

    /// The warning when it expires within 30 days, else nil.
    public func warning(now: Date) -> String? {
        guard validUntil.timeIntervalSince(now) < Self.warningWindow else { return nil }
        let days = daysLeft(now: now)
        let when = days < 1 ? "in less than a day" : days == 1 ? "in 1 day" : "in \(days) days"
        return "the certificate in \(file) expires \(when) (\(Self.text(validUntil))): renew it in Apple's developer account"
    }

    static func text(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        return formatter.string(from: date)
    }
}
