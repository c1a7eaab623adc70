import FilmstripLoading
import FilmstripMedia
import FilmstripPreviews
import FilmstripSync
import Foundation

/// Runs one shard of a catalog: makes the outputs of each of its items that is not complete, and records every
/// outcome.
///
/// ```swift
/// let items = try CatalogList.read(URL(fileURLWithPath: "videos.txt"))
/// let shard = try CatalogShard.resolve(explicit: nil, shards: nil, environment: ProcessInfo.processInfo.environment).shard
/// var options = CatalogRunConfiguration()
/// options.preview.formats = [.vtt, .hls]
/// let summary = try await CatalogGenerator.run(items, shard: shard, catalog: Catalog(directory: out), options: options)
/// ```
///
/// An item is made in `staging/KEY/` while its maker holds `staging/KEY.lock`, and renamed to `items/` with its
/// completion marker written last; a process that finds the lock held waits for it, then finds the item complete.
/// So items are made once, whatever runs at the same time, and a run killed at any point leaves only staging that
/// the next run removes. A failed item is recorded and the run goes on.
public enum CatalogGenerator {
    /// Runs `shard` of `items` into `catalog`. `report` is called once per item as it ends, from any task.
    public static func run(
        _ items: [CatalogItem], shard: CatalogShard, catalog: Catalog, options: CatalogRunConfiguration,
        report: @escaping @Sendable (CatalogItemOutcome) -> Void = { _ in }
    ) async throws(CatalogError) -> CatalogRunSummary {
        let started = ContinuousClock.now
        // Bad settings are the caller's mistake, not every item's failure: nothing is touched.
        do {
            try options.preview.validate()
        } catch {
            throw CatalogError(.invalidSettings, error.message, underlying: error)
        }
        let settings = PreviewOutputSettings(options.preview)
        try catalog.prepare(settings: settings)
        let staleRemoved = catalog.removeStaleStaging()
        let journal = try CatalogJournal(catalog: catalog, shard: shard)
        let context = ItemContext(
            catalog: catalog, shard: shard, settings: settings, options: options, journal: journal,
            transport: options.preview.transport ?? DefaultTransport.shared,
            recorded: DoneKeys(results: catalog.results))
        let mine = shard.assigned(items)
        var totals: [CatalogItemOutcome.Kind: Int] = [:]
        await withTaskGroup(of: CatalogItemOutcome.Kind.self) { group in
            var next = mine.makeIterator()
            func start(_ item: CatalogItem) {
                group.addTask {
                    let outcome = await context.make(item)
                    report(outcome)
                    return outcome.kind
                }
            }
            for _ in 0..<max(1, options.jobs) {
                guard let item = next.next() else { break }
                start(item)
            }
            while let kind = await group.next() {
                totals[kind, default: 0] += 1
                // A cancelled run (SIGTERM) starts nothing new; the items under way end as cancelled.
                if !Task.isCancelled, let item = next.next() { start(item) }
            }
        }
        return CatalogRunSummary(
            shard: shard, listed: items.count, assigned: mine.count, done: totals[.done] ?? 0,
            skipped: totals[.skipped] ?? 0, failed: totals[.failed] ?? 0, cancelled: totals[.cancelled] ?? 0,
            staleRemoved: staleRemoved,
            seconds: (ContinuousClock.now - started).seconds)
    }
}

/// What every item of a run shares.
final class ItemContext: Sendable {
    let catalog: Catalog
    let shard: CatalogShard
    let settings: PreviewOutputSettings
    let options: CatalogRunConfiguration
    let journal: CatalogJournal
    let transport: any DataLoading
    /// Keys with a `done` line in some results file.
    let recorded: DoneKeys

    init(
        catalog: Catalog, shard: CatalogShard, settings: PreviewOutputSettings, options: CatalogRunConfiguration,
        journal: CatalogJournal, transport: any DataLoading, recorded: DoneKeys
    ) {
        self.catalog = catalog
        self.shard = shard
        self.settings = settings
        self.options = options
        self.journal = journal
        self.transport = transport
        self.recorded = recorded
    }
}
