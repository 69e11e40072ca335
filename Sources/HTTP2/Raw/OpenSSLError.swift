internal import COpenSSL

/// Drains OpenSSL's thread-local error queue into one readable line.
enum OpenSSLError {
    static func drain() -> String {
        var parts: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            parts.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return parts.isEmpty ? "no OpenSSL error detail" : parts.joined(separator: "; ")
    }
}
