import Crypto
import FilmstripSync
import Foundation

#if canImport(Glibc)
    import Glibc
    private let systemWrite = Glibc.write
#elseif canImport(Darwin)
    import Darwin
    private let systemWrite = Darwin.write
#endif

/// A download's directory on disk: its journal of verified files and the writes that keep it true.
///
/// The journal (`journal`) starts with the line `filmstrip-download 1 URL` and holds one line per stored file,
/// `SHA256 LENGTH PATH`, appended only after the file was written under a temporary name, flushed to disk and
/// renamed into place. A run killed at any instant leaves at most a `.part` file (removed by the next run) or a file
/// without its line (fetched again). The directory is locked (`flock`) while a run has it.
final class DownloadStore: Sendable {
    struct Entry: Sendable, Hashable {
        var sha256: String
        var length: Int64
    }

    static let journalName = "journal"

    let directory: URL
    /// The journal's descriptor, open for appending and locked, for the life of the store; written under `entries`'
    /// lock.
    private let journal: Int32
    private let entries: Mutex<[String: Entry]>

    /// Opens (or starts) the download of `source` in `directory`, creating it when needed.
    init(directory: URL, source: URL) throws(DownloadError) {
        self.directory = directory
        let fm = FileManager.default
        do {
            try fm.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw DownloadError(.storage, "cannot create \(directory.path): \(error)", underlying: error)
        }
        let path = directory.appendingPathComponent(Self.journalName).path
        let existed = fm.fileExists(atPath: path)
        if !existed, let others = try? fm.contentsOfDirectory(atPath: directory.path), !others.isEmpty {
            throw DownloadError(
                .conflict, "\(directory.path) is not empty and holds no download; choose an empty or new directory")
        }
        let fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw DownloadError(.storage, "cannot open \(path): \(Self.errnoText())") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw DownloadError(.conflict, "another download is running in \(directory.path)")
        }
        journal = fd
        let header = "filmstrip-download 1 \(source.absoluteString)"
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // A line without its newline was cut by a kill: not an entry.
        if !text.hasSuffix("\n"), !lines.isEmpty { lines.removeLast() }
        var found: [String: Entry] = [:]
        if lines.isEmpty || (lines.count == 1 && lines[0].isEmpty) {
            if !text.isEmpty {
                // Only a torn header: start the journal again.
                _ = ftruncate(fd, 0)
            }
            entries = Mutex([:])
            try append(header + "\n")
        } else {
            guard lines[0] == header else {
                close(fd)
                let other = lines[0].split(separator: " ", maxSplits: 2).dropFirst(2).first.map(String.init) ?? "?"
                throw DownloadError(
                    .conflict, "\(directory.path) holds the download of \(other), not of \(source.absoluteString)")
            }
            for line in lines.dropFirst() {
                let fields = line.split(separator: " ", maxSplits: 2).map(String.init)
                guard fields.count == 3, fields[0].count == 64, let length = Int64(fields[1]), length >= 0,
                    Self.isSafe(fields[2])
                else { continue }
                found[fields[2]] = Entry(sha256: fields[0], length: length)
            }
            // An entry whose file is gone or of another length is fetched again.
            found = found.filter { path, entry in
                let attributes = try? fm.attributesOfItem(atPath: directory.appendingPathComponent(path).path)
                return (attributes?[.size] as? NSNumber)?.int64Value == entry.length
            }
            entries = Mutex(found)
        }
        Self.removeLeftovers(in: directory)
    }

    deinit { close(journal) }

    /// The verified entry for `path`, if it has one.
    func verified(_ path: String) -> Entry? { entries.withLock { $0[path] } }

    /// Every verified entry.
    var all: [String: Entry] { entries.withLock { $0 } }

    /// Stores `data` at `path` (only the owner may read it when `secret`): written as `path.part`, flushed, renamed,
    /// then journaled.
    @discardableResult
    func store(_ data: Data, at path: String, secret: Bool = false) throws(DownloadError) -> Entry {
        let target = directory.appendingPathComponent(path)
        try write(data, to: target, mode: secret ? 0o600 : 0o644)
        let entry = Entry(sha256: Self.sha256(data), length: Int64(data.count))
        try entries.withLock { (entries) throws(DownloadError) in
            try append("\(entry.sha256) \(entry.length) \(path)\n")
            entries[path] = entry
        }
        return entry
    }

    /// Writes a file that is not journaled (a playlist, the record) in one step: a reader sees the old one or the
    /// new one, never part of it.
    func writeAtomically(_ data: Data, to path: String, secret: Bool = false) throws(DownloadError) {
        try write(data, to: directory.appendingPathComponent(path), mode: secret ? 0o600 : 0o644)
    }

    private func write(_ data: Data, to target: URL, mode: mode_t) throws(DownloadError) {
        let part = target.path + ".part"
        do {
            try FileManager.default.createDirectory(
                at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw DownloadError(.storage, "cannot create the folder of \(target.path): \(error)", underlying: error)
        }
        let fd = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw DownloadError(.storage, "cannot write \(part): \(Self.errnoText())") }
        var failure: String?
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = systemWrite(fd, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = Self.errnoText()
                    return
                }
                offset += written
            }
        }
        if failure == nil, fsync(fd) != 0 { failure = Self.errnoText() }
        _ = fchmod(fd, mode)
        close(fd)
        if failure == nil, rename(part, target.path) != 0 { failure = Self.errnoText() }
        if let failure {
            unlink(part)
            throw DownloadError(.storage, "cannot write \(target.path): \(failure)")
        }
    }

    private func append(_ line: String) throws(DownloadError) {
        let bytes = Array(line.utf8)
        let written = bytes.withUnsafeBytes { systemWrite(journal, $0.baseAddress!, $0.count) }
        guard written == bytes.count, fsync(journal) == 0 else {
            throw DownloadError(.storage, "cannot write the journal in \(directory.path): \(Self.errnoText())")
        }
    }

    static func sha256(_ data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    /// A relative path inside the directory: no `..`, not absolute, no control characters.
    static func isSafe(_ path: String) -> Bool {
        !path.isEmpty && !path.hasPrefix("/") && !path.split(separator: "/").contains("..")
            && !path.contains { $0.isNewline || $0 == "\0" }
    }

    private static func removeLeftovers(in directory: URL) {
        guard let walker = FileManager.default.enumerator(atPath: directory.path) else { return }
        for case let path as String in walker where path.hasSuffix(".part") {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(path))
        }
    }

    static func errnoText() -> String { String(cString: strerror(errno)) }

    /// Bytes free for an unprivileged user on the disk that holds the directory; `nil` when it cannot be told.
    func freeSpace() -> Int64? {
        var stats = statvfs()
        guard statvfs(directory.path, &stats) == 0 else { return nil }
        let (total, overflow) = Int64(stats.f_bavail).multipliedReportingOverflow(by: Int64(stats.f_frsize))
        return overflow ? Int64.max : total
    }
}
