/// Durations as people write them in options: `250ms`, `5s`, `2m`, `1h`, or bare seconds.
public enum DurationText {
    public static func parse(_ text: String) -> Duration? {
        let trimmed = text.trimmingSpaces
        let units: [(String, Int64)] = [("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000)]
        for (suffix, millis) in units where trimmed.hasSuffix(suffix) {
            let number = trimmed.dropLast(suffix.count)
            // "5ms" also ends in "s": only accept the longest unit that leaves a number.
            guard let value = Double(number), value >= 0, value * Double(millis) < 1e15 else { continue }
            return .milliseconds(Int64((value * Double(millis)).rounded()))
        }
        if let seconds = Double(trimmed), seconds >= 0, seconds < 1e12 { return .milliseconds(Int64((seconds * 1000).rounded())) }
        return nil
    }

    /// The shortest exact spelling, used in queue names (`push.retry.30s`).
    public static func format(_ duration: Duration) -> String {
        let millis = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        if millis % 3_600_000 == 0, millis > 0 { return "\(millis / 3_600_000)h" }
        if millis % 60_000 == 0, millis > 0 { return "\(millis / 60_000)m" }
        if millis % 1000 == 0, millis > 0 { return "\(millis / 1000)s" }
        return "\(millis)ms"
    }

    public static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}

extension String {
    var trimmingSpaces: String {
        String(self.drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
