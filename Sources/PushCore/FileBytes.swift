#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a whole (small) file: keys and certificates. POSIX calls, not Foundation's FileManager:
/// the worker touches no Foundation code at run time, which keeps its idle resident set smaller
/// (measured: docs/evidence/code-measurements.md#file-reads-without-foundation).
public enum FileBytes {
    /// nil when the file cannot be opened or read.
    public static func contents(of path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            bytes.append(contentsOf: chunk[..<count])
        }
    }
}
