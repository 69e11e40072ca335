/// Protocol Buffers' JSON form of a Duration, which FCM's `android.ttl` uses: seconds with up to
/// nine fractional digits and an `s` ("3600s", "3.5s"); no sign, no other unit.
public enum FCMDurationText {
    /// The seconds `text` stands for, or nil when it is not that form.
    public static func seconds(_ text: String) -> Double? {
        guard text.hasSuffix("s") else { return nil }
        let number = text.dropLast()
        let parts = number.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.count <= 12, whole.allSatisfy(\.isASCIIDigit) else { return nil }
        if parts.count == 2 {
            let fraction = parts[1]
            guard !fraction.isEmpty, fraction.count <= 9, fraction.allSatisfy(\.isASCIIDigit) else { return nil }
        }
        return Double(number)
    }

    /// Whole seconds in that form.
    public static func format(seconds: Int) -> String { "\(seconds)s" }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
