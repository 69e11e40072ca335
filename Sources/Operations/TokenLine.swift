import PushCore

/// One line of a token file (`groups import`): a device of the app's platform, nothing (a blank
/// line), or why it is not a device. Spaces, tabs and a carriage return around the token are not
/// part of it (files from spreadsheets and Windows editors carry them).
public enum TokenLine: Sendable, Equatable {
    case blank
    case device(DeviceToken)
    case bad(String)

    /// `line` without its newline.
    public init(_ line: ArraySlice<UInt8>, rules: any PlatformJobRules) {
        var start = line.startIndex
        var end = line.endIndex
        while start < end, Self.isBlank(line[start]) { start += 1 }
        while end > start, Self.isBlank(line[end - 1]) { end -= 1 }
        guard start < end else {
            self = .blank
            return
        }
        do {
            self = .device(try rules.device(from: .string(String(decoding: line[start..<end], as: UTF8.self))))
        } catch {
            self = .bad(error.description)
        }
    }

    public init(_ line: String, rules: any PlatformJobRules) {
        self.init(Array(line.utf8)[...], rules: rules)
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
    }
}
