/// A `Retry-After` header value (RFC 9110 §10.2.3): delta-seconds, or an HTTP-date, read against
/// the current time. FCM and Web Push services send it with 429 and 503 answers.
public enum RetryAfter {
    /// A wait longer than a day is a broken header, not a plan: capped so a job is not parked for ever.
    public static let ceiling: Duration = .seconds(86_400)

    /// The wait `value` asks for, or nil when it is neither form. A date in the past is no wait.
    /// - Parameter now: UNIX seconds.
    public static func delay(_ value: String, now: Int) -> Duration? {
        let text = value.trimmingASCIISpaces
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            guard text.utf8.count <= 12, let seconds = Int64(text) else { return ceiling }
            return min(.seconds(seconds), ceiling)
        }
        guard let date = HTTPDate.unixSeconds(text) else { return nil }
        return min(.seconds(max(0, date - now)), ceiling)
    }
}

/// RFC 9110 §5.6.7's HTTP-date: the preferred IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), and
/// the obsolete RFC 850 ("Sunday, 06-Nov-94 08:49:37 GMT") and asctime ("Sun Nov  6 08:49:37 1994")
/// forms that recipients must still read.
public enum HTTPDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// UNIX seconds, or nil when `text` is none of the three forms.
    public static func unixSeconds(_ text: String) -> Int? {
        let words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        if words.count == 6, words[0].hasSuffix(","), words[5] == "GMT" {
            // IMF-fixdate: day-name, DD Mon YYYY HH:MM:SS GMT
            guard let day = Int(words[1]), let month = month(words[2]), words[3].count == 4, let year = Int(words[3]) else { return nil }
            return combine(year: year, month: month, day: day, time: words[4])
        }
        if words.count == 4, words[0].hasSuffix(","), words[3] == "GMT" {
            // RFC 850: day-name, DD-Mon-YY HH:MM:SS GMT; a two-digit year is read as the nearest
            // century's (RFC 9110: one more than 50 years ahead is in the past).
            let date = words[1].split(separator: "-").map(String.init)
            guard date.count == 3, let day = Int(date[0]), let month = month(date[1]), date[2].count == 2, let shortYear = Int(date[2]) else { return nil }
            return combine(year: shortYear < 70 ? 2000 + shortYear : 1900 + shortYear, month: month, day: day, time: words[2])
        }
        if words.count == 5 {
            // asctime: day-name Mon D HH:MM:SS YYYY
            guard let month = month(words[1]), let day = Int(words[2]), words[4].count == 4, let year = Int(words[4]) else { return nil }
            return combine(year: year, month: month, day: day, time: words[3])
        }
        return nil
    }

    private static func month(_ name: String) -> Int? {
        months.firstIndex(of: name).map { $0 + 1 }
    }

    private static func combine(year: Int, month: Int, day: Int, time: String) -> Int? {
        let parts = time.split(separator: ":").map { Int($0) }
        guard parts.count == 3, let hour = parts[0], let minute = parts[1], let second = parts[2],
              (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else { return nil }
        return daysFromCivil(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

extension String {
    var trimmingASCIISpaces: String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return String(slice)
    }
}
