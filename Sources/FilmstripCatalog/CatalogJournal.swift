import FilmstripLoading
import FilmstripSync
public import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The results file of one shard, `DIR/results/shard-I.jsonl`: one JSON line per outcome, appended and synced to
/// disk before the run goes on, so a line once written survives a crash of the process or the machine.
///
/// A line is one `write` to a file opened for appending, under the file's lock (`flock`), which processes sharing a
/// shard take in turn. A process killed in the middle of one can leave a line without its end; the next process to
/// open the file cuts it off (under the same lock) before appending, and readers skip lines they cannot parse.
public final class CatalogJournal: Sendable {
    /// The file.
    public let url: URL
    private let fd: Mutex<Int32>

    /// Opens (or creates) the results file of `shard` in `catalog`.
    public convenience init(catalog: Catalog, shard: CatalogShard) throws(CatalogError) {
        try self.init(url: catalog.results.appendingPathComponent("shard-\(shard.index).jsonl"))
    }

    /// Opens (or creates) the results file at `url`, cutting off a last line left without its end.
    public init(url: URL) throws(CatalogError) {
        self.url = url
        let descriptor = open(url.path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw CatalogError(.storage, "cannot open the results file: \(Durable.lastError)", url: url)
        }
        fd = Mutex(descriptor)
        // Under the file's lock, which every append takes too: a line another process is appending is never taken
        // for one a killed writer left unfinished (cutting it lost that process's done line).
        flock(descriptor, LOCK_EX)
        Self.cutUnfinishedLine(descriptor)
        flock(descriptor, LOCK_UN)
    }

    deinit { fd.withLock { _ = close($0) } }

    /// Appends `record` as one line; with `durable`, returns once it is on disk.
    public func append(_ record: CatalogRecord, durable: Bool = true) throws(CatalogError) {
        let line = try JSONEncoder.catalog.encodeLine(record)
        let failure = fd.withLock { fd -> String? in
            // Processes on one shard append under the file's lock (see `init`).
            flock(fd, LOCK_EX)
            defer { flock(fd, LOCK_UN) }
            if let failure = DurableFile.writeAll(fd, line) { return failure }
            return durable && fsync(fd) != 0 ? Durable.lastError : nil
        }
        if let failure { throw CatalogError(.storage, "cannot append to the results: \(failure)", url: url) }
    }

    /// Every record in the results files of `catalog`, in file order, skipping lines that do not parse.
    public static func records(in catalog: Catalog) -> [CatalogRecord] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: catalog.results.path)) ?? []
        var records: [CatalogRecord] = []
        for name in names.sorted() where name.hasSuffix(".jsonl") {
            guard let data = try? Data(contentsOf: catalog.results.appendingPathComponent(name)) else { continue }
            records += decode(data[...])
        }
        return records
    }

    /// The records of results-file bytes, one per line, skipping lines that do not parse.
    static func decode(_ lines: Data.SubSequence) -> [CatalogRecord] {
        let decoder = JSONDecoder.catalog
        return lines.split(separator: UInt8(ascii: "\n")).compactMap {
            try? decoder.decode(CatalogRecord.self, from: Data($0))
        }
    }

    /// Truncates the file after its last newline when it does not end with one.
    private static func cutUnfinishedLine(_ fd: Int32) {
        let size = lseek(fd, 0, SEEK_END)
        guard size > 0 else { return }
        var last: UInt8 = 0
        guard pread(fd, &last, 1, size - 1) == 1, last != UInt8(ascii: "\n") else { return }
        var end = size
        var buffer = [UInt8](repeating: 0, count: 4096)
        while end > 0 {
            let start = max(0, end - off_t(buffer.count))
            let count = Int(end - start)
            guard pread(fd, &buffer, count, start) == count else { return }
            if let newline = buffer[..<count].lastIndex(of: UInt8(ascii: "\n")) {
                _ = ftruncate(fd, start + off_t(newline) + 1)
                return
            }
            end = start
        }
        _ = ftruncate(fd, 0)
    }
}
