import FilmstripSync
import Foundation

/// The keys that have a `done` line in some results file of the catalog, read incrementally: each refresh reads
/// only the complete lines appended since the last one.
final class DoneKeys: Sendable {
    private let results: URL
    private let state = Mutex<(keys: Set<ContentKey>, offsets: [String: Int])>(([], [:]))

    init(results: URL) {
        self.results = results
        refresh()
    }

    func contains(_ key: ContentKey) -> Bool { state.withLock { $0.keys.contains(key) } }

    /// Adds `key`; `false` when it was there already.
    func insert(_ key: ContentKey) -> Bool { state.withLock { $0.keys.insert(key).inserted } }

    /// Reads what the results files gained since the last refresh. Blocks on file reads.
    func refresh() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: results.path)) ?? []
        for name in names where name.hasSuffix(".jsonl") {
            let offset = state.withLock { $0.offsets[name] ?? 0 }
            guard let handle = try? FileHandle(forReadingFrom: results.appendingPathComponent(name)) else { continue }
            defer { try? handle.close() }
            guard (try? handle.seek(toOffset: UInt64(offset))) != nil, let data = try? handle.readToEnd(),
                let end = data.lastIndex(of: UInt8(ascii: "\n"))
            else { continue }
            let found = CatalogJournal.decode(data[..<end]).filter { $0.status == .done }.compactMap(\.key)
            state.withLock {
                $0.keys.formUnion(found)
                $0.offsets[name] = offset + (end - data.startIndex) + 1
            }
        }
    }
}
