#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Wall-clock time for events and expirations.
public struct UnixTime: Sendable, Hashable {
    public let milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    public static func now() -> UnixTime {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UnixTime(milliseconds: Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec + 500_000) / 1_000_000)
    }

    public var seconds: Int { Int(milliseconds / 1000) }

    /// `2026-11-21T20:39:00.123Z`, computed without DateFormatter (which is slow and not Sendable).
    public var rfc3339: String {
        var bytes = [UInt8]()
        bytes.reserveCapacity(24)
        appendRFC3339(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Events carry a time each, so this is on the hot path: digits go straight into the buffer.
    public func appendRFC3339(to bytes: inout [UInt8]) {
        let totalSeconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let millis = Int(milliseconds - totalSeconds * 1000)
        var days = Int(totalSeconds >= 0 ? totalSeconds / 86400 : (totalSeconds - 86399) / 86400)
        let secondsOfDay = Int(totalSeconds) - days * 86400
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
        // Fixed widths by constant divisors (a multiply each): a loop dividing by a computed
        // power of ten cost a hardware division per digit, 34 an event.
        func twoDigits(_ value: Int) {
            bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value / 10))
            bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value % 10))
        }
        if (0...9999).contains(year) {
            twoDigits(year / 100)
            twoDigits(year % 100)
        } else {
            // Beyond RFC 3339's four digits: written in full.
            bytes.append(contentsOf: String(year).utf8)
        }
        bytes.append(UInt8(ascii: "-"))
        twoDigits(month)
        bytes.append(UInt8(ascii: "-"))
        twoDigits(day)
        bytes.append(UInt8(ascii: "T"))
        twoDigits(secondsOfDay / 3600)
        bytes.append(UInt8(ascii: ":"))
        twoDigits(secondsOfDay / 60 % 60)
        bytes.append(UInt8(ascii: ":"))
        twoDigits(secondsOfDay % 60)
        bytes.append(UInt8(ascii: "."))
        bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: millis / 100))
        twoDigits(millis % 100)
        bytes.append(UInt8(ascii: "Z"))
    }
}
