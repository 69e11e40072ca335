/// The lowercase `8-4-4-4-12` text of a UUID given as two 64-bit halves (version and variant bits
/// already set), written straight into the String's storage: one allocation, as ids are made per
/// job and per request.
public enum UUIDText {
    public static func format(high: UInt64, low: UInt64) -> String {
        String(unsafeUninitializedCapacity: 36) { text in
            var count = 0
            for position in 0..<32 {
                if position == 8 || position == 12 || position == 16 || position == 20 {
                    text[count] = UInt8(ascii: "-")
                    count += 1
                }
                let word = position < 16 ? high : low
                let value = UInt8((word >> UInt64(60 - (position % 16) * 4)) & 0xF)
                text[count] = value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
                count += 1
            }
            return count
        }
    }
}
