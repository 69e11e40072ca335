import Glibc
import Operations

/// `groups import`'s progress on a terminal (standard error, redrawn in place at most ten times
/// a second); nothing when standard error is not a terminal, so logs and pipes stay clean.
final class ImportProgressBar {
    private let enabled: Bool
    private let started = ContinuousClock.now
    private var lastDrawn: ContinuousClock.Instant?
    private var drawn = false

    init(enabled: Bool) {
        self.enabled = enabled && isatty(2) == 1
    }

    func update(_ progress: ImportProgress) {
        guard enabled else { return }
        let now = ContinuousClock.now
        if let lastDrawn, now - lastDrawn < .milliseconds(100) { return }
        lastDrawn = now
        drawn = true
        writeStandardError("\r\u{1B}[K" + Self.line(progress, elapsed: now - started))
    }

    /// Clears the bar so that a message or the summary starts on a clean line.
    func clear() {
        guard drawn else { return }
        drawn = false
        lastDrawn = nil
        writeStandardError("\r\u{1B}[K")
    }

    static func line(_ progress: ImportProgress, elapsed: Duration) -> String {
        let summary = progress.summary
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = seconds > 0 ? Int(Double(summary.lines) / seconds) : 0
        var text = ""
        if let total = progress.totalBytes, total > 0 {
            let fraction = min(1, Double(progress.bytesRead) / Double(total))
            let width = 30
            let filled = Int(fraction * Double(width))
            text = "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] "
                + "\(Int(fraction * 100))%  "
        }
        return text + "\(summary.lines) lines, \(summary.devices) devices, \(summary.bad) bad, \(rate) lines/s"
    }
}
