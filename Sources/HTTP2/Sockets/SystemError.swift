import Glibc

/// errno text for messages; strerror is not thread-safe, strerror_r (XSI variant here) is.
enum SystemError {
    static func describe(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard strerror_r(code, &buffer, buffer.count) == 0 else { return "errno \(code)" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
