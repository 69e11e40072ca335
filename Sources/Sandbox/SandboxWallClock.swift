#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PushCore

/// UNIX time for JWT `iat` checks, 410 timestamps and `Date` headers, without Foundation on the
/// request path.
enum SandboxWallClock {
    static func epochSeconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int(now.tv_sec)
    }

    static func epochMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// RFC 9110's IMF-fixdate, what a `Date` header holds: `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func httpDate(epochSeconds: Int) -> String {
        // From the RFC 3339 form, `1994-11-06T08:49:37.000Z` (years 0…9999).
        let stamp = Array(UnixTime(milliseconds: Int64(epochSeconds) * 1000).rfc3339)
        let month = Int(String(stamp[5..<7])) ?? 1
        let days = epochSeconds >= 0 ? epochSeconds / 86_400 : (epochSeconds - 86_399) / 86_400
        // 1970-01-01 was a Thursday.
        let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][((days % 7) + 7) % 7]
        let monthName = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][month - 1]
        return "\(weekday), \(String(stamp[8..<10])) \(monthName) \(String(stamp[0..<4])) \(String(stamp[11..<19])) GMT"
    }
}
