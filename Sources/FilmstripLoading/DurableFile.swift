public import Foundation

#if canImport(Glibc)
    import Glibc
    private let systemWrite = Glibc.write
#elseif canImport(Musl)
    import Musl
    private let systemWrite = Musl.write
#elseif canImport(Darwin)
    import Darwin
    private let systemWrite = Darwin.write
#endif

/// The file system calls that writes meant to survive a crash rest on (the catalog's files, a download's files and
/// journal): every byte written, flushed to the disk, then renamed into place. Failures are the system's message.
public enum DurableFile {
    /// The message of the last failed call.
    public static var lastError: String { String(cString: strerror(errno)) }

    /// Writes all of `data` to `fd`; the failure's message, or `nil`.
    public static func writeAll(_ fd: Int32, _ data: Data) -> String? {
        data.withUnsafeBytes { raw -> String? in
            var offset = 0
            while offset < raw.count {
                let n = systemWrite(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return lastError
                }
                offset += n
            }
            return nil
        }
    }

    /// Flushes `fd` to the disk (on Apple platforms through the drive's cache, `F_FULLFSYNC`); whether it was.
    public static func flush(_ fd: Int32) -> Bool {
        #if canImport(Darwin)
            if fcntl(fd, F_FULLFSYNC) == 0 { return true }
        #endif
        return fsync(fd) == 0
    }

    /// Writes `data` to `temporary` (created with `mode`; with `exclusive`, only if it does not exist), flushes it and
    /// renames it over `path`, so a reader finds the old file or the new one, never a part of either. The failure's
    /// message (the temporary file removed), or `nil`.
    public static func replace(
        _ path: String, with data: Data, through temporary: String, mode: mode_t = 0o644, exclusive: Bool = false
    ) -> String? {
        let fd = open(temporary, O_WRONLY | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC), mode)
        guard fd >= 0 else { return "cannot create \(temporary): \(lastError)" }
        var failure = writeAll(fd, data)
        if failure == nil, !flush(fd) { failure = lastError }
        _ = fchmod(fd, mode)
        close(fd)
        if failure == nil, rename(temporary, path) != 0 { failure = lastError }
        if failure != nil { unlink(temporary) }
        return failure
    }
}
