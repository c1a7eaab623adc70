public import FilmstripLoading
import FilmstripMedia
import FilmstripPreviews
import FilmstripSync
import Foundation

/// Where each listed item of a catalog stands.
public struct CatalogStatus: Sendable {
    /// One item's state.
    public enum State: String, Sendable, Hashable, Codable, CaseIterable {
        /// Complete under the catalog's settings.
        case done
        /// Being made now (a live process holds its lock).
        case running
        /// Its last outcome was a failure.
        case failed
        /// Never made, or made for an older version of the video or of the settings.
        case missing
        /// Complete, but a file no longer matches its marker (`--verify` only; `catalog generate --verify` makes
        /// it again).
        case corrupt
        /// A remote input that cannot be reached now (its error is given): whether it changed is unknown. The last
        /// version made of it, if any, is kept (``Item/key``, ``Item/completion``), so an outage does not empty an
        /// index.
        case unreachable
    }

    /// One item.
    public struct Item: Sendable, Hashable {
        /// The item.
        public var item: CatalogItem
        /// Its key, when its identity could be read.
        public var key: ContentKey?
        /// Its state.
        public var state: State
        /// The last failure, for ``State/failed`` (and why an identity could not be read).
        public var error: CatalogRecord.Failure?
        /// The completion marker, for ``State/done`` (and the last version made, for ``State/unreachable``).
        public var completion: ItemCompletion?
    }

    /// Every listed item, in list order.
    public var items: [Item]
    /// Complete items in the folder that no listed item has (older versions of videos or settings).
    public var orphans: Int
    /// Whether the catalog has had a run: before its first, there are no settings and every item is missing.
    public var started: Bool

    /// The number of items in `state`.
    public func count(_ state: State) -> Int { items.count { $0.state == state } }

    /// Reads the state of `items` in `catalog` under the catalog's settings. Identities are read `concurrency` at a
    /// time (one `stat` per file, one one-byte request per URL); with `verify`, every output of a complete item is
    /// read and checked against the SHA-256 in its marker.
    public static func read(
        _ items: [CatalogItem], catalog: Catalog, loading: LoadingConfiguration = LoadingConfiguration(),
        transport: (any DataLoading)? = nil, verify: Bool = false, concurrency: Int = 16
    ) async throws(CatalogError) -> CatalogStatus {
        guard let settings = try catalog.settings() else {
            // No run yet: a waiting pipeline sees everything missing, not an error.
            return CatalogStatus(
                items: items.map { Item(item: $0, key: nil, state: .missing) }, orphans: 0, started: false)
        }
        let transport = transport ?? DefaultTransport.shared
        var journal = Journal()
        for record in CatalogJournal.records(in: catalog) {
            journal.failures[record.key?.hex ?? record.input] = record.status == .failed ? record : nil
            if record.status == .done, let key = record.key { journal.lastDone[record.input] = key }
        }
        let known = journal
        var states = [Item?](repeating: nil, count: items.count)
        await withTaskGroup(of: Indexed<Item>.self) { group in
            var next = items.indices.makeIterator()
            func start(_ index: Int) {
                group.addTask {
                    Indexed(index, await state(of: items[index], catalog, settings, loading, transport, verify, known))
                }
            }
            for _ in 0..<max(1, concurrency) {
                guard let index = next.next() else { break }
                start(index)
            }
            while let child = await group.next() {
                states[child.index] = child.value
                if let index = next.next() { start(index) }
            }
        }
        let listed = Set(states.compactMap { $0?.key })
        return CatalogStatus(
            items: states.compactMap { $0 }, orphans: catalog.storedKeys().count { !listed.contains($0) },
            started: true)
    }

    private static func state(
        of item: CatalogItem, _ catalog: Catalog, _ settings: PreviewOutputSettings, _ loading: LoadingConfiguration,
        _ transport: any DataLoading, _ verify: Bool, _ journal: Journal
    ) async -> Item {
        let identity: ItemIdentity
        do {
            identity =
                item.url.isFileURL
                ? try await runBlocking { try ItemIdentity.ofFile(item.url) }
                : try await ItemIdentity.ofRemote(item.url, loading: loading, transport: transport)
        } catch {
            guard !item.url.isFileURL else {
                return Item(item: item, key: nil, state: .failed, error: ItemContext.failure(error))
            }
            let last = journal.lastDone[item.input]
            let completion = try? await runBlocking { last.flatMap { catalog.completion(of: $0) } }
            return Item(
                item: item, key: completion == nil ? nil : last, state: .unreachable,
                error: ItemContext.failure(error), completion: completion ?? nil)
        }
        let key = ContentKey(identity: identity, settings: settings)
        // Markers and (with verify) every output are read off the cooperative pool.
        let found = try? await runBlocking { () -> (ItemCompletion, Bool)? in
            guard let completion = catalog.completion(of: key) else { return nil }
            return (completion, !verify || intact(completion, in: catalog.itemDirectory(of: key)))
        }
        if let (completion, whole) = found ?? nil {
            if !whole {
                return Item(item: item, key: key, state: .corrupt, completion: completion)
            }
            return Item(item: item, key: key, state: .done, completion: completion)
        }
        if FileLock.isHeld(catalog.staging.appendingPathComponent(key.hex + ".lock").path) {
            return Item(item: item, key: key, state: .running)
        }
        if let failure = journal.failures[key.hex] {
            return Item(item: item, key: key, state: .failed, error: failure.error)
        }
        return Item(item: item, key: key, state: .missing)
    }

    /// What the results files say: the last failure per key (or input), the last done key per input.
    struct Journal: Sendable {
        var failures: [String: CatalogRecord] = [:]
        var lastDone: [String: ContentKey] = [:]
    }

    /// Whether every file of a complete item still has the size and SHA-256 its marker gives.
    static func intact(_ completion: ItemCompletion, in folder: URL) -> Bool {
        completion.files.allSatisfy { file in
            guard let data = try? Data(contentsOf: folder.appendingPathComponent(file.path)),
                Int64(data.count) == file.bytes
            else { return false }
            return Digest.sha256Hex(data) == file.sha256
        }
    }
}
