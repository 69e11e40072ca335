import Crypto

/// Names fan-out markers by content: SHA-256 (swift-crypto) of NUL-separated parts, as hex.
enum Digest {
    static func hex(_ parts: [[UInt8]]) -> String {
        var hasher = SHA256()
        for part in parts {
            hasher.update(data: part)
            hasher.update(data: [0])
        }
        return hasher.finalize().map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }.joined()
    }

    static func hex(_ parts: [String]) -> String { hex(parts.map { Array($0.utf8) }) }
}
