import FilmstripLoading
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
    static var lastError: String { DurableFile.lastError }

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
        if let failure = DurableFile.replace(path, with: data, through: temporary, exclusive: true) {
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
