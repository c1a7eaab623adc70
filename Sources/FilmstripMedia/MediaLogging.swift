import CFFmpeg
import FilmstripSync
public import Logging

/// Where FFmpeg's own messages go. By default nowhere: the library never prints. Set a logger to see them
/// (FFmpeg warnings and errors arrive as `.warning` and `.error`, the rest as `.debug`).
public enum MediaLogging {
    private static let current = Mutex<Logger?>(nil)
    private static let installed = Mutex(false)

    /// The logger for FFmpeg's messages; `nil` (the default) drops them.
    public static var logger: Logger? {
        get { current.withLock { $0 } }
        set {
            current.withLock { $0 = newValue }
            install()
        }
    }

    /// Routes FFmpeg's log callback here; called before any FFmpeg use.
    static func install() {
        installed.withLock { done in
            guard !done else { return }
            done = true
            fs_install_log_sink(ffmpegLogSink, fs_log_level_info())
        }
    }

    fileprivate static func log(level: Int32, line: String) {
        guard let logger = current.withLock({ $0 }) else { return }
        let message = Logger.Message(stringLiteral: line.trimmingCharacters(in: .whitespacesAndNewlines))
        if level <= fs_log_level_error() {
            logger.error(message, metadata: ["source": "ffmpeg"])
        } else if level <= fs_log_level_warning() {
            logger.warning(message, metadata: ["source": "ffmpeg"])
        } else {
            logger.debug(message, metadata: ["source": "ffmpeg"])
        }
    }
}

private func ffmpegLogSink(_ level: Int32, _ line: UnsafePointer<CChar>?) {
    guard let line else { return }
    MediaLogging.log(level: level, line: String(cString: line))
}
