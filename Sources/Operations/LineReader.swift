import Glibc

/// Reads a file or standard input line by line in 64 KiB reads, without holding more than one
/// read and one line: a token file of millions of lines streams through in constant memory. A line
/// longer than `maxLineBytes` (no token is that long: a binary file, or one without newlines) is
/// read past and reported as `.tooLong`, not kept.
public struct LineReader: ~Copyable {
    public enum Line: Equatable {
        /// The line's bytes, without the newline.
        case text(ArraySlice<UInt8>)
        case tooLong(bytes: Int)
    }

    public static let maxLineBytes = 64 * 1024
    static let readSize = 64 * 1024

    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private var buffer: [UInt8] = []
    /// Where the unread part of `buffer` starts.
    private var start = 0
    private var endOfInput = false
    /// Bytes read so far: progress against the file's size.
    public private(set) var bytesRead = 0
    /// The size of a regular file, nil for a pipe or terminal.
    public let totalBytes: Int?

    /// `path` "-" is standard input.
    public init(path: String) throws(OperationError) {
        if path == "-" {
            descriptor = 0
            ownsDescriptor = false
        } else {
            let opened = open(path, O_RDONLY | O_CLOEXEC)
            guard opened >= 0 else { throw OperationError("cannot open \(path): \(String(cString: strerror(errno)))") }
            descriptor = opened
            ownsDescriptor = true
        }
        var status = stat()
        totalBytes = fstat(descriptor, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG ? Int(status.st_size) : nil
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
    }

    /// The next line, nil at the end of the input. A last line without a newline counts.
    public mutating func next() throws(OperationError) -> Line? {
        var skipped = 0
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[start..<newline]
                start = newline + 1
                if skipped > 0 { return .tooLong(bytes: skipped + line.count) }
                return .text(line)
            }
            if endOfInput {
                guard start < buffer.count || skipped > 0 else { return nil }
                let line = buffer[start...]
                start = buffer.count
                if skipped > 0 { return .tooLong(bytes: skipped + line.count) }
                return .text(line)
            }
            if buffer.count - start > Self.maxLineBytes {
                // Keep reading past it; only its length is kept.
                skipped += buffer.count - start
                start = buffer.count
            }
            try fill()
        }
    }

    /// Moves the unread rest to the front and appends one read.
    private mutating func fill() throws(OperationError) {
        if start > 0 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        let before = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: Self.readSize))
        var count: Int
        repeat {
            count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + before, Self.readSize) }
        } while count < 0 && errno == EINTR
        guard count >= 0 else {
            buffer.removeSubrange(before...)
            throw OperationError("cannot read the input: \(String(cString: strerror(errno)))")
        }
        buffer.removeSubrange((before + count)...)
        bytesRead += count
        if count == 0 { endOfInput = true }
    }
}
