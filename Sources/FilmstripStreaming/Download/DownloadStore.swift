import Crypto
import FilmstripLoading
import FilmstripSync
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A download's directory on disk: its journal of verified files and the writes that keep it true.
///
/// The journal (`journal`) starts with the line `filmstrip-download 2 URL` (the stream's URL without its query, so a
/// rotated token still resumes) and holds one line per stored file, `SHA256 LENGTH PATH ORIGIN` (ORIGIN: the URL it
/// came from without its query, and `#bytes=A-B` for a range), appended only after the file was written under a
/// temporary name, flushed to disk and renamed into place. A file counts as verified only when it still has its
/// length and the plan wants it from the same origin (a run with another choice of renditions, or a manifest that
/// changed, fetches afresh). A run killed at any instant leaves at most a `.part` file (removed by the next run), a
/// file without its line (fetched again) or a line cut short (cut off by the next run). The directory is locked
/// (`flock`) while a run has it.
final class DownloadStore: Sendable {
    struct Entry: Sendable, Hashable {
        var sha256: String
        var length: Int64
        var origin: String
    }

    static let journalName = "journal"
    static let temporarySuffix = ".part"

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
        if !fm.fileExists(atPath: path),
            let others = try? fm.contentsOfDirectory(atPath: directory.path),
            others.contains(where: { !$0.hasPrefix(".") })
        {
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
        let header = "filmstrip-download 2 \(Self.origin(source))"
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        // A line cut short by a kill is not an entry: the journal is cut back to its last whole line, so the next
        // line appended starts on a line of its own.
        let whole =
            text.hasSuffix("\n")
            ? text : String(text[..<(text.lastIndex(of: "\n").map(text.index(after:)) ?? text.startIndex)])
        if whole.utf8.count != text.utf8.count { _ = ftruncate(fd, off_t(whole.utf8.count)) }
        let lines = whole.split(separator: "\n").map(String.init)
        Self.removeLeftovers(in: directory)
        guard let first = lines.first else {
            entries = Mutex([:])
            try append(header + "\n")
            return
        }
        guard first == header else {
            close(fd)
            let other = first.split(separator: " ", maxSplits: 2).dropFirst(2).first.map(String.init) ?? "?"
            throw DownloadError(
                .conflict, "\(directory.path) holds the download of \(other), not of \(Self.origin(source))")
        }
        var found: [String: Entry] = [:]
        for line in lines.dropFirst() {
            if let (path, entry) = Self.entry(Substring(line)) { found[path] = entry }
        }
        // An entry whose file is gone or of another length is fetched again.
        found = found.filter { path, entry in
            let attributes = try? fm.attributesOfItem(atPath: directory.appendingPathComponent(path).path)
            return (attributes?[.size] as? NSNumber)?.int64Value == entry.length
        }
        entries = Mutex(found)
    }

    deinit { close(journal) }

    /// A journal line `SHA256 LENGTH PATH ORIGIN` read; `nil` when it is not one.
    static func entry(_ line: Substring) -> (path: String, entry: Entry)? {
        let fields = line.split(separator: " ", maxSplits: 3).map(String.init)
        guard fields.count == 4, fields[0].count == 64, let length = Int64(fields[1]), length > 0, isSafe(fields[2])
        else { return nil }
        return (fields[2], Entry(sha256: fields[0], length: length, origin: fields[3]))
    }

    /// The verified entry for `file`: stored from the same origin, still of its length.
    func verified(_ file: DownloadFile) -> Entry? {
        entries.withLock { $0[file.path] }.flatMap { $0.origin == Self.origin(file) ? $0 : nil }
    }

    /// Every verified entry.
    var all: [String: Entry] { entries.withLock { $0 } }

    /// Stores `data` as `file` (only the owner may read it when it is secret): written as `PATH.part`, flushed,
    /// renamed, then journaled.
    @discardableResult
    func store(_ data: Data, as file: DownloadFile) throws(DownloadError) -> Entry {
        let target = directory.appendingPathComponent(file.path)
        try write(data, to: target, mode: file.isSecret ? 0o600 : 0o644)
        let entry = Entry(sha256: Self.sha256(data), length: Int64(data.count), origin: Self.origin(file))
        try entries.withLock { (entries) throws(DownloadError) in
            try append("\(entry.sha256) \(entry.length) \(file.path) \(entry.origin)\n")
            entries[file.path] = entry
        }
        return entry
    }

    /// Writes a file that is not journaled (a playlist, the record) in one step: a reader sees the old one or the
    /// new one, never part of it.
    func writeAtomically(_ data: Data, to path: String, secret: Bool = false) throws(DownloadError) {
        try write(data, to: directory.appendingPathComponent(path), mode: secret ? 0o600 : 0o644)
    }

    private func write(_ data: Data, to target: URL, mode: mode_t) throws(DownloadError) {
        let part = target.path + Self.temporarySuffix
        do {
            try FileManager.default.createDirectory(
                at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw DownloadError(.storage, "cannot create the folder of \(target.path): \(error)", underlying: error)
        }
        if let failure = DurableFile.replace(target.path, with: data, through: part, mode: mode) {
            throw DownloadError(.storage, "cannot write \(target.path): \(failure)")
        }
    }

    private func append(_ line: String) throws(DownloadError) {
        let before = lseek(journal, 0, SEEK_END)
        if let failure = DurableFile.writeAll(journal, Data(line.utf8))
            ?? (DurableFile.flush(journal) ? nil : Self.errnoText())
        {
            // A line written in part is taken back, so that the next one starts a line.
            if before >= 0 { _ = ftruncate(journal, before) }
            throw DownloadError(.storage, "cannot write the journal in \(directory.path): \(failure)")
        }
    }

    static func sha256(_ data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    /// Where a file comes from, as the journal records it: its URL without query or fragment (a signed URL's token
    /// changes), and its byte range.
    static func origin(_ file: DownloadFile) -> String {
        origin(file.url) + (file.range.map { "#bytes=\($0.lowerBound)-\($0.upperBound - 1)" } ?? "")
    }

    static func origin(_ url: URL) -> String {
        guard var parts = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return url.absoluteString }
        parts.query = nil
        parts.fragment = nil
        return (parts.string ?? url.absoluteString).replacingOccurrences(of: " ", with: "%20")
    }

    /// A relative path inside the directory: no `..`, not absolute, no spaces or control characters.
    static func isSafe(_ path: String) -> Bool {
        !path.isEmpty && !path.hasPrefix("/") && !path.split(separator: "/").contains("..")
            && !path.contains { $0.isNewline || $0.isWhitespace || $0 == "\0" }
    }

    private static func removeLeftovers(in directory: URL) {
        guard let walker = FileManager.default.enumerator(atPath: directory.path) else { return }
        for case let path as String in walker where path.hasSuffix(temporarySuffix) {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(path))
        }
    }

    static func errnoText() -> String { DurableFile.lastError }

    /// Bytes free for an unprivileged user on the disk that holds the directory; `nil` when it cannot be told.
    func freeSpace() -> Int64? {
        #if canImport(Darwin)
            // What the system would free for a download the user asked for (purgeable space included).
            let values = try? directory.resourceValues(forKeys: [.volumeAvailableCapacityForImportantUsageKey])
            return values?.volumeAvailableCapacityForImportantUsage
        #else
            var stats = statvfs()
            guard statvfs(directory.path, &stats) == 0 else { return nil }
            let (total, overflow) = Int64(stats.f_bavail).multipliedReportingOverflow(by: Int64(stats.f_frsize))
            return overflow ? Int64.max : total
        #endif
    }
}
