/// The `Retry-After` header of a 429 or 503 (RFC 9110 §10.2.3): delay-seconds (`120`) or an
/// HTTP-date (`Wed, 21 Oct 2015 07:28:00 GMT`, the IMF-fixdate form every current server sends).
public enum RetryAfter {
    /// A day caps what one answer can make a device wait: a longer value is a broken header, and the
    /// retry ladder's own delays bound the wait anyway.
    public static let longest: Duration = .seconds(86_400)

    /// The wait `text` asks for, from `now` (UNIX seconds) for a date; nil when it says nothing usable.
    public static func parse(_ text: String, now: Int) -> Duration? {
        let trimmed = text.utf8.drop { $0 == 0x20 }
        if let first = trimmed.first, (0x30...0x39).contains(first) {
            var seconds = 0
            for byte in trimmed {
                if byte == 0x20 { break }
                guard (0x30...0x39).contains(byte) else { return nil }
                seconds = min(seconds * 10 + Int(byte - 0x30), 86_400_000)
            }
            return min(.seconds(seconds), longest)
        }
        guard let date = unixSeconds(ofHTTPDate: String(decoding: trimmed, as: UTF8.self)) else { return nil }
        return min(.seconds(max(0, date - now)), longest)
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `Sun, 06 Nov 1994 08:49:37 GMT` → UNIX seconds.
    static func unixSeconds(ofHTTPDate text: String) -> Int? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[5] == "GMT", let day = Int(parts[1]), let month = months.firstIndex(of: String(parts[2])),
              let year = Int(parts[3]), (1...31).contains(day), year >= 1970 else { return nil }
        let clock = parts[4].split(separator: ":").compactMap { Int($0) }
        guard clock.count == 3, (0...23).contains(clock[0]), (0...59).contains(clock[1]), (0...60).contains(clock[2]) else { return nil }
        return daysSinceEpoch(year: year, month: month + 1, day: day) * 86_400 + clock[0] * 3600 + clock[1] * 60 + clock[2]
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil).
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
