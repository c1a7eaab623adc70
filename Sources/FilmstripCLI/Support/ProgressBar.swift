import FilmstripSync
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A one-line progress bar on standard error, drawn only when standard error is a terminal.
final class ProgressBar: Sendable {
    private let label: String
    private let enabled = isatty(STDERR_FILENO) != 0
    private let last = Mutex((fraction: -1.0, time: Date.distantPast))

    init(label: String) { self.label = label }

    func update(_ done: Int, of total: Int, detail: String = "") {
        guard enabled, total > 0 else { return }
        let fraction = Double(done) / Double(total)
        let draw = last.withLock { last -> Bool in
            let now = Date()
            guard done == total || now.timeIntervalSince(last.time) > 0.05 else { return false }
            last = (fraction, now)
            return true
        }
        guard draw else { return }
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        FileHandle.standardError.write(Data("\r\(label) [\(bar)] \(done)/\(total)\(detail)\u{1B}[K".utf8))
        if done == total { FileHandle.standardError.write(Data("\n".utf8)) }
    }

    /// Clears the bar's line, so that a message can be printed; the next update draws it again.
    func clear() {
        guard enabled, last.withLock({ $0.fraction >= 0 && $0.fraction < 1 }) else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8))
    }
}
