import Crypto
import FilmstripSync
public import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A directory of cached resources, one file per URL, named by the SHA-256 of the normalised URL.
///
/// - Writes are atomic: bytes go to a temporary file in the same directory, then `rename(2)` puts them in place, so
///   a reader (in this or another process) sees the old entry, the new one, or none, never a partial file.
/// - The total size is bounded; when a write goes over the limit the least recently used entries are removed.
///   Recency is the file's modification time, touched on every read, so it survives restarts.
/// - Each entry ends with a 48-byte trailer: a marker, the length of the bytes and their SHA-256. An entry that does
///   not match its trailer (cut short by a full disk or a crash of the machine, changed on disk) is never served:
///   reading it removes it and answers `nil`, as for an entry never stored.
public final class DiskCache: Sendable {
    /// The directory holding the entries.
    public let directory: URL
    /// The most bytes kept. Default 512 MiB.
    public let sizeLimit: Int

    private struct Entry {
        var size: Int
        var lastUse: Double
    }

    private struct Index {
        var entries: [String: Entry] = [:]
        var total = 0
    }

    private let index = Mutex<Index?>(nil)
    /// The time an entry is used at (a test's clock in tests).
    private let now: @Sendable () -> Date

    /// Opens (and creates if needed) a cache directory.
    public convenience init(directory: URL, sizeLimit: Int = 512 << 20) {
        self.init(directory: directory, sizeLimit: sizeLimit, now: Date.init)
    }

    /// Opens a cache directory whose recency is read from `now`.
    package init(directory: URL, sizeLimit: Int = 512 << 20, now: @escaping @Sendable () -> Date) {
        self.directory = directory.standardizedFileURL
        self.sizeLimit = sizeLimit
        self.now = now
    }

    /// The default cache directory: `$XDG_CACHE_HOME/filmstrip`, else `~/.cache/filmstrip` (on Apple platforms,
    /// the user's Caches directory).
    public static var defaultDirectory: URL {
        #if os(Linux)
            if let xdg = ProcessInfo.processInfo.environment["XDG_CACHE_HOME"], !xdg.isEmpty {
                return URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent(
                    "filmstrip", isDirectory: true)
            }
            return FileManager.default.homeDirectoryForCurrentUser
                .appendingPathComponent(".cache", isDirectory: true)
                .appendingPathComponent("filmstrip", isDirectory: true)
        #else
            let caches =
                FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
                ?? FileManager.default.temporaryDirectory
            return caches.appendingPathComponent("filmstrip", isDirectory: true)
        #endif
    }

    // MARK: Keys

    /// The URL as the cache sees it: scheme and host lower-cased, default port and fragment removed, empty path `/`.
    public static func normalizedKey(for url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            return url.absoluteString
        }
        components.fragment = nil
        components.scheme = components.scheme?.lowercased()
        components.host = components.host?.lowercased()
        if (components.scheme == "http" && components.port == 80)
            || (components.scheme == "https" && components.port == 443)
        {
            components.port = nil
        }
        if components.path.isEmpty, components.host != nil { components.path = "/" }
        return components.string ?? url.absoluteString
    }

    /// The file name of the entry for `url` (or the byte `range` of it): 64 hex digits.
    public static func fileName(for url: URL, range: Range<Int64>? = nil) -> String {
        var key = normalizedKey(for: url)
        if let range { key += " bytes=\(range.lowerBound)-\(range.upperBound - 1)" }
        return Digest.sha256Hex(key)
    }

    /// Where the entry for `url` (or its byte `range`) lives (whether or not it exists).
    public func fileURL(for url: URL, range: Range<Int64>? = nil) -> URL {
        directory.appendingPathComponent(Self.fileName(for: url, range: range), isDirectory: false)
    }

    // MARK: Reading

    /// Whether an entry for `url` exists (without marking it used or checking it: reading it may still find it
    /// damaged and drop it).
    public func contains(_ url: URL, range: Range<Int64>? = nil) -> Bool {
        FileManager.default.fileExists(atPath: fileURL(for: url, range: range).path)
    }

    /// The stored bytes for `url`, checked against the entry's length and SHA-256 and marking it recently used;
    /// `nil` when not cached, or when the entry was damaged (it is removed).
    public func data(for url: URL, range: Range<Int64>? = nil) throws(LoadingError) -> Data? {
        let file = fileURL(for: url, range: range)
        let name = file.lastPathComponent
        let stored: Data
        do {
            stored = try Data(contentsOf: file)
        } catch {
            forget(name)
            if !FileManager.default.fileExists(atPath: file.path) { return nil }
            throw LoadingError(.cacheIO, url: url, "cannot read the cache entry \(file.path)", underlying: error)
        }
        guard let payload = Self.payload(of: stored) else {
            unlink(file.path)
            forget(name)
            return nil
        }
        let used = touch(file.path)
        withIndex { index in
            if index.entries[name] != nil {
                index.entries[name]!.lastUse = used
            } else {
                index.entries[name] = Entry(size: stored.count, lastUse: used)
                index.total += stored.count
            }
        }
        return payload
    }

    private func forget(_ name: String) {
        withIndex { index in
            if let entry = index.entries.removeValue(forKey: name) { index.total -= entry.size }
        }
    }

    // MARK: Integrity

    /// The size of the trailer after each entry's bytes.
    public static let trailerSize = 48
    private static let marker = Array("FSCACHE1".utf8)

    /// The trailer for `payload`: the marker, its length (64-bit little endian) and its SHA-256.
    static func trailer(for payload: Data) -> Data {
        var trailer = Data(marker)
        withUnsafeBytes(of: UInt64(payload.count).littleEndian) { trailer.append(contentsOf: $0) }
        trailer.append(contentsOf: SHA256.hash(data: payload))
        return trailer
    }

    /// The bytes of a stored entry when its trailer matches them; `nil` for anything cut short or changed.
    static func payload(of stored: Data) -> Data? {
        guard stored.count >= trailerSize else { return nil }
        let length = stored.count - trailerSize
        let payload = stored.prefix(length)
        let trailer = stored.suffix(trailerSize)
        guard trailer.elementsEqual(self.trailer(for: payload)) else { return nil }
        return Data(payload)
    }

    // MARK: Writing

    /// Stores `data` for `url` atomically, with its trailer, then evicts least recently used entries past the size
    /// limit.
    ///
    /// An entry larger than the whole limit is not stored.
    public func store(_ data: Data, for url: URL, range: Range<Int64>? = nil) throws(LoadingError) {
        let size = data.count + Self.trailerSize
        guard size <= sizeLimit else { return }
        let file = fileURL(for: url, range: range)
        let temporary = directory.appendingPathComponent(".tmp-\(UUID().uuidString)", isDirectory: false)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try (data + Self.trailer(for: data)).write(to: temporary)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw LoadingError(
                .cacheIO, url: url, "cannot write to the cache directory \(directory.path)", underlying: error)
        }
        guard rename(temporary.path, file.path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw LoadingError(.cacheIO, url: url, "cannot move the cache entry into place: \(reason)")
        }
        let name = file.lastPathComponent
        let used = touch(file.path)
        let victims = withIndex { index -> [String] in
            if let old = index.entries[name] { index.total -= old.size }
            index.entries[name] = Entry(size: size, lastUse: used)
            index.total += size
            guard index.total > sizeLimit else { return [] }
            var victims: [String] = []
            for (key, entry) in index.entries.sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
                guard index.total > sizeLimit else { break }
                if key == name { continue }
                index.total -= entry.size
                index.entries[key] = nil
                victims.append(key)
            }
            return victims
        }
        for victim in victims {
            unlink(directory.appendingPathComponent(victim, isDirectory: false).path)
        }
    }

    /// Removes the entry for `url`, if any (for example after it failed to decode).
    public func remove(_ url: URL, range: Range<Int64>? = nil) {
        let file = fileURL(for: url, range: range)
        unlink(file.path)
        withIndex { index in
            if let entry = index.entries.removeValue(forKey: file.lastPathComponent) { index.total -= entry.size }
        }
    }

    /// Removes every entry.
    public func removeAll() throws(LoadingError) {
        let manager = FileManager.default
        if let names = try? manager.contentsOfDirectory(atPath: directory.path) {
            for name in names where Self.isEntryName(name) || name.hasPrefix(".tmp-") {
                unlink(directory.appendingPathComponent(name).path)
            }
        }
        index.withLock { $0 = Index() }
    }

    /// Total bytes stored.
    public var totalSize: Int { withIndex { $0.total } }
    /// Number of entries.
    public var entryCount: Int { withIndex { $0.entries.count } }

    // MARK: Index

    private func withIndex<R>(_ body: (inout Index) -> R) -> R {
        index.withLock { stored in
            if stored == nil { stored = scan() }
            return body(&stored!)
        }
    }

    /// Sets an entry's modification (and access) time to now, its recency across restarts; returns it.
    private func touch(_ path: String) -> Double {
        let seconds = now().timeIntervalSince1970
        let whole = seconds.rounded(.down)
        let time = timeval(tv_sec: time_t(whole), tv_usec: suseconds_t((seconds - whole) * 1_000_000))
        _ = [time, time].withUnsafeBufferPointer { utimes(path, $0.baseAddress) }
        return seconds
    }

    /// Reads sizes and recency from the directory, and removes temporary files that a crashed writer left behind.
    private func scan() -> Index {
        var result = Index()
        let manager = FileManager.default
        guard let names = try? manager.contentsOfDirectory(atPath: directory.path) else { return result }
        let staleBefore = now().addingTimeInterval(-3600)
        for name in names {
            let path = directory.appendingPathComponent(name).path
            guard let attributes = try? manager.attributesOfItem(atPath: path) else { continue }
            let modified = (attributes[.modificationDate] as? Date) ?? Date.distantPast
            if name.hasPrefix(".tmp-") {
                if modified < staleBefore { unlink(path) }
                continue
            }
            guard Self.isEntryName(name), let size = (attributes[.size] as? NSNumber)?.intValue else { continue }
            result.entries[name] = Entry(size: size, lastUse: modified.timeIntervalSince1970)
            result.total += size
        }
        return result
    }

    private static func isEntryName(_ name: String) -> Bool {
        name.utf8.count == 64 && name.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }

    private static func fileSize(_ file: URL) -> Int? {
        var info = stat()
        guard stat(file.path, &info) == 0 else { return nil }
        return Int(info.st_size)
    }
}
