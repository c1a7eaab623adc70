import FilmstripMedia
public import FilmstripPreviews
public import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A catalog's output folder.
///
/// ```
/// DIR/catalog.json                     the settings every key was made with
/// DIR/items/ab/abcdef…/                one complete item: its outputs and filmstrip-item.json
/// DIR/staging/abcdef….lock             held (flock) by the process making that item
/// DIR/staging/abcdef…/                 the item being made; renamed into items/ when complete
/// DIR/results/shard-I.jsonl            one JSON line per outcome, appended by shard I
/// DIR/index.json                       written by `catalog index`
/// ```
public struct Catalog: Sendable {
    /// The folder.
    public let directory: URL

    /// The name of an item's completion marker.
    public static let markerName = "filmstrip-item.json"

    /// A catalog in `directory` (created by the first run).
    public init(directory: URL) { self.directory = directory.standardizedFileURL }

    var items: URL { directory.appendingPathComponent("items", isDirectory: true) }
    var staging: URL { directory.appendingPathComponent("staging", isDirectory: true) }
    /// Where the shards' result files are.
    public var results: URL { directory.appendingPathComponent("results", isDirectory: true) }
    var settingsFile: URL { directory.appendingPathComponent("catalog.json") }

    /// An item's folder relative to the catalog: `items/ab/abcdef…`.
    public func relativePath(of key: ContentKey) -> String { "items/\(key.hex.prefix(2))/\(key.hex)" }

    /// An item's folder.
    public func itemDirectory(of key: ContentKey) -> URL {
        directory.appendingPathComponent(relativePath(of: key), isDirectory: true)
    }

    /// Whether the item is complete: its folder holds its marker.
    public func isComplete(_ key: ContentKey) -> Bool {
        access(itemDirectory(of: key).appendingPathComponent(Self.markerName).path, F_OK) == 0
    }

    /// The item's completion marker, or `nil` when the item is absent.
    public func completion(of key: ContentKey) -> ItemCompletion? {
        let marker = itemDirectory(of: key).appendingPathComponent(Self.markerName)
        guard let data = try? Data(contentsOf: marker) else { return nil }
        return try? JSONDecoder.catalog.decode(ItemCompletion.self, from: data)
    }

    /// The settings of the last run, or `nil` before the first.
    public func settings() throws(CatalogError) -> PreviewOutputSettings? {
        guard FileManager.default.fileExists(atPath: settingsFile.path) else { return nil }
        do {
            return try JSONDecoder.catalog.decode(PreviewOutputSettings.self, from: Data(contentsOf: settingsFile))
        } catch {
            throw CatalogError(.storage, "unreadable catalog settings", url: settingsFile, underlying: error)
        }
    }

    /// Creates the folders and records `settings` (atomically; every shard writes the same).
    func prepare(settings: PreviewOutputSettings) throws(CatalogError) {
        for folder in [items, staging, results] { try Durable.makeDirectory(folder.path) }
        if (try? self.settings()) != settings {
            try Durable.write(JSONEncoder.catalog.encodeLine(settings), to: settingsFile.path)
        }
    }

    /// Removes what killed runs left in `staging/`: every item folder whose lock no live process holds (taking the
    /// lock first, so that nobody starts the item meanwhile). Returns how many folders were removed.
    @discardableResult
    public func removeStaleStaging() -> Int {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: staging.path) else { return 0 }
        var stems: Set<String> = []
        for name in names {
            var stem = name
            for suffix in [".lock", ".old"] where stem.hasSuffix(suffix) { stem = String(stem.dropLast(suffix.count)) }
            stems.insert(stem)
        }
        var removed = 0
        for stem in stems.sorted() {
            guard let lock = try? FileLock.acquire(staging.appendingPathComponent(stem + ".lock").path) else {
                continue
            }
            for leftover in [stem, stem + ".old"] {
                let path = staging.appendingPathComponent(leftover).path
                if FileManager.default.fileExists(atPath: path) {
                    Durable.remove(path)
                    removed += 1
                }
            }
            lock.release(removing: true)
        }
        return removed
    }

    /// Keys of the complete items in the folder, for spotting outputs no listed item has any more.
    public func storedKeys() -> [ContentKey] {
        let fm = FileManager.default
        var keys: [ContentKey] = []
        for prefix in (try? fm.contentsOfDirectory(atPath: items.path)) ?? [] {
            let folder = items.appendingPathComponent(prefix).path
            for name in (try? fm.contentsOfDirectory(atPath: folder)) ?? [] {
                if let key = ContentKey(hex: name) { keys.append(key) }
            }
        }
        return keys
    }
}

extension JSONEncoder {
    /// Sorted keys, snake case, slashes as they are.
    static var catalog: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return encoder
    }

    /// `value` as one line of JSON with its newline.
    func encodeLine(_ value: some Encodable) throws(CatalogError) -> Data {
        do {
            return try encode(value) + Data("\n".utf8)
        } catch {
            throw CatalogError(.storage, "cannot encode \(type(of: value))", underlying: error)
        }
    }
}

extension JSONDecoder {
    /// Reads what ``JSONEncoder/catalog`` writes.
    static var catalog: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }
}
