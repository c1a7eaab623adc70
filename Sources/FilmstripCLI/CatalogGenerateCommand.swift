import ArgumentParser
import Filmstrip
import FilmstripCatalog
import FilmstripSync
import Foundation

struct CatalogGenerateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Make the preview tracks of this shard's items that are not complete; record every outcome.",
        discussion: """
            The shard is --shard I/N, else the batch engine's index: SLURM_ARRAY_TASK_ID (with \
            SLURM_ARRAY_TASK_COUNT, or --shards N), JOB_COMPLETION_INDEX (with --shards N) or \
            AWS_BATCH_JOB_ARRAY_INDEX (with AWS_BATCH_JOB_ARRAY_SIZE, or --shards N); else the whole list. Items \
            are assigned by a hash of their input: the same in every process, unchanged when the list is \
            reordered, balanced to one item.

            Complete items are skipped, staging left by killed runs is removed, and an item another process is \
            making is waited for. Each outcome is one line of DIR/results/shard-I.jsonl, synced to disk. Exit \
            status: 0 when every item of the shard is complete, 1 when some failed (they are recorded and the run \
            goes on), 2 on bad input.
            """
    )

    @Argument(help: "A list file (paths and URLs) or a folder of videos.")
    var list: String

    @Option(name: .shortAndLong, help: "The catalog folder.")
    var output: String

    @Option(help: "This process's shard, I/N (0-based).")
    var shard: String?

    @Option(help: "The number of shards, for an index read from the environment.")
    var shards: Int?

    @Option(help: "Items made at the same time.")
    var jobs: Int = 1

    @Option(help: "Cores this process may use (default: SLURM_CPUS_PER_TASK, the CPU affinity and cgroup quota).")
    var cores: Int?

    @Flag(help: "Make every item again, complete or not.")
    var force = false

    @Flag(help: "Check every output of complete items against its marker; make again those whose files changed.")
    var verify = false

    @Flag(help: "Print each outcome as a JSON line, then a summary line.")
    var json = false

    @OptionGroup var generation: GenerationOptions

    @OptionGroup var network: NetworkOptions

    func run() async throws {
        guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
        if let cores, cores < 1 { throw ValidationError("--cores must be at least 1") }
        let items = try catalogItems(list)
        let resolved: CatalogShard.Resolution
        do {
            resolved = try CatalogShard.resolve(
                explicit: shard.map(CatalogShard.init(parsing:)), shards: shards,
                environment: ProcessInfo.processInfo.environment)
        } catch {
            printError(error.description)
            throw ExitStatus.badInput
        }
        for warning in resolved.warnings { printError("warning: " + warning) }
        var options = CatalogRunConfiguration()
        options.preview = try generation.previewOptions()
        for note in generation.notes(hls: options.preview.formats.contains(.hls)) { printError(note) }
        options.preview.loading = network.applied(to: options.preview.loading)
        options.jobs = jobs
        if let cores { options.cores = cores }
        options.workersPerItem = generation.workers
        options.force = force
        options.verify = verify
        let catalog = Catalog(directory: URL(fileURLWithPath: output, isDirectory: true))
        let bar = ProgressBar(label: "items")
        let total = resolved.shard.assigned(items).count
        let ended = Mutex(0)
        let json = self.json
        // SIGTERM (Slurm's scancel and preemption, Kubernetes and AWS Batch stopping a task) stops the run cleanly:
        // nothing new starts, the items under way are cancelled and their staging removed, and the results say
        // what was done; the next run goes on from there.
        signal(SIGTERM, SIG_IGN)
        let run = Task { () async throws -> CatalogRunSummary in
            try await CatalogGenerator.run(items, shard: resolved.shard, catalog: catalog, options: options) {
                outcome in
                let count = ended.withLock {
                    $0 += 1
                    return $0
                }
                if json {
                    let line =
                        outcome.record.map { "{\"event\":\"item\"," + $0.jsonLine.dropFirst() }
                        ?? JSON.object([
                            ("event", .string("item")), ("input", .string(outcome.item.input)),
                            ("key", outcome.key.map { .string($0.hex) } ?? .null),
                            ("status", .string(outcome.kind == .skipped ? "skipped" : "cancelled")),
                        ]).text
                    // Unbuffered, one write per line: a reader sees each outcome as it ends.
                    FileHandle.standardOutput.write(Data((line + "\n").utf8))
                } else if outcome.kind == .failed, let error = outcome.record?.error {
                    bar.clear()
                    printError("failed: \(outcome.item.input): \(error.kind): \(error.message)")
                }
                bar.update(count, of: total)
            }
        }
        let terminate = DispatchSource.makeSignalSource(signal: SIGTERM, queue: .global())
        terminate.setEventHandler { run.cancel() }
        terminate.resume()
        let summary: CatalogRunSummary
        do {
            summary = try await run.value
        } catch {
            printError("\(error)")
            throw ExitStatus.badInput
        }
        terminate.cancel()
        if json {
            print(
                JSON.object([
                    ("event", .string("end")), ("shard", .string(summary.shard.description)),
                    ("source", .string(resolved.source.rawValue)), ("listed", .int(summary.listed)),
                    ("assigned", .int(summary.assigned)), ("done", .int(summary.done)),
                    ("skipped", .int(summary.skipped)), ("failed", .int(summary.failed)),
                    ("cancelled", .int(summary.cancelled)),
                    ("stale_removed", .int(summary.staleRemoved)),
                    ("seconds", .double((summary.seconds * 1000).rounded() / 1000)),
                    (
                        "results",
                        .string(catalog.results.appendingPathComponent("shard-\(summary.shard.index).jsonl").path)
                    ),
                ]).text)
        } else {
            print(
                "shard \(summary.shard) (\(resolved.source == .none ? "the whole list" : resolved.source.rawValue)): "
                    + "\(summary.assigned) of \(summary.listed) items: "
                    + "\(summary.done) made, \(summary.skipped) already complete, \(summary.failed) failed"
                    + (summary.cancelled > 0 ? ", \(summary.cancelled) stopped " : " ")
                    + String(format: "in %.2f s", summary.seconds))
        }
        if run.isCancelled {
            printError("stopped by SIGTERM; run again to go on")
            throw ExitCode(128 + SIGTERM)
        }
        if summary.failed > 0 { throw ExitCode(1) }
    }
}
