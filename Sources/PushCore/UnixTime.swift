import Foundation

/// Wall-clock time for events and expirations.
public struct UnixTime: Sendable, Hashable {
    public let milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    public static func now() -> UnixTime {
        UnixTime(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded()))
    }

    public var seconds: Int { Int(milliseconds / 1000) }

    /// `2026-11-21T20:39:00.123Z`, computed without DateFormatter (which is slow and not Sendable).
    public var rfc3339: String {
        let millis = Int(milliseconds % 1000)
        var days = Int(milliseconds / 1000) / 86400
        let secondsOfDay = Int(milliseconds / 1000) % 86400
        // Civil-from-days (Howard Hinnant's algorithm).
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let dayOfEra = days - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPrime = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthPrime + 2) / 5 + 1
        let month = monthPrime < 10 ? monthPrime + 3 : monthPrime - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondsOfDay / 3600, 2)):\(pad(secondsOfDay / 60 % 60, 2)):\(pad(secondsOfDay % 60, 2)).\(pad(millis, 3))Z"
    }
}
