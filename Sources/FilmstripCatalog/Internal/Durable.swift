import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The file system calls the catalog's promises rest on: data on disk before the name that points at it, renames
/// made durable by syncing their folder.
enum Durable {
    /// The message of the last failed call.
    static var lastError: String { String(cString: strerror(errno)) }

    /// Flushes a file or folder to disk.
    static func sync(_ path: String) throws(CatalogError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CatalogError(.storage, "cannot open \(path) to sync it: \(lastError)") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw CatalogError(.storage, "cannot sync \(path): \(lastError)") }
    }

    /// Writes `data` to a temporary name beside `path`, syncs it, renames it over `path` and syncs the folder: a
    /// reader finds the old file or the new one, never a part of either.
    static func write(_ data: Data, to path: String) throws(CatalogError) {
        let temporary = path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CatalogError(.storage, "cannot create \(temporary): \(lastError)") }
        var failure = writeAll(fd, data)
        if failure == nil, fsync(fd) != 0 { failure = lastError }
        close(fd)
        if failure == nil, rename(temporary, path) != 0 { failure = lastError }
        if let failure {
            unlink(temporary)
            throw CatalogError(.storage, "cannot write \(path): \(failure)")
        }
        try sync((path as NSString).deletingLastPathComponent)
    }

    /// Creates a folder and its parents.
    static func makeDirectory(_ path: String) throws(CatalogError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw CatalogError(.storage, "cannot create \(path): \(error.localizedDescription)", underlying: error)
        }
    }

    /// Removes a file or folder tree; a missing one is fine.
    static func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Writes all of `data` to `fd`; the failure's message, or `nil`.
func writeAll(_ fd: Int32, _ data: Data) -> String? {
    data.withUnsafeBytes { raw -> String? in
        var offset = 0
        while offset < raw.count {
            let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                return Durable.lastError
            }
            offset += n
        }
        return nil
    }
}
