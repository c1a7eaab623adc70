import FilmstripMedia
public import FilmstripPreviews
public import Foundation

/// How a shard runs.
public struct CatalogRunConfiguration: Sendable {
    /// The generation options. The output-changing ones become the catalog's ``PreviewOutputSettings``; `workers` is set
    /// per item from ``cores`` and ``jobs`` unless ``workersPerItem`` is given.
    public var preview = PreviewTrackConfiguration()
    /// Items made at the same time.
    public var jobs = 1
    /// The cores this process is given (``availableCores(environment:)`` by default).
    public var cores = CatalogRunConfiguration.availableCores()
    /// Decoders per item; `nil` gives each item its share of the cores, `max(1, cores / jobs)`.
    public var workersPerItem: Int?
    /// Makes every item again, complete or not.
    public var force = false
    /// Reads every output of a complete item back and checks it against its marker; an item whose files changed is
    /// made again (what `catalog status --verify` reports as corrupt).
    public var verify = false
    /// How often a process waiting for an item another process is making checks its lock.
    public var lockPollInterval: Duration = .milliseconds(250)
    /// The clock that waiting for another process's lock sleeps on (a test's clock in tests).
    package var lockWaitClock: any Clock<Duration> = ContinuousClock()

    /// The defaults.
    public init() {}

    /// Decoders each item gets.
    var workers: Int { workersPerItem ?? max(1, cores / max(1, jobs)) }

    /// The cores this process may use: Slurm's `SLURM_CPUS_PER_TASK` when set, else the processors it may run on,
    /// bounded by a cgroup v2 CPU quota (a Kubernetes CPU limit) when there is one.
    public static func availableCores(environment: [String: String] = ProcessInfo.processInfo.environment) -> Int {
        if let text = environment["SLURM_CPUS_PER_TASK"], let cores = Int(text), cores > 0 { return cores }
        var cores = ProcessInfo.processInfo.activeProcessorCount
        if let text = try? String(contentsOfFile: "/sys/fs/cgroup/cpu.max", encoding: .utf8) {
            let parts = text.split(whereSeparator: \.isWhitespace)
            if parts.count == 2, let quota = Double(parts[0]), let period = Double(parts[1]), period > 0 {
                cores = min(cores, Int((quota / period).rounded(.up)))
            }
        }
        return max(1, cores)
    }
}

/// What a shard's run did.
public struct CatalogRunSummary: Sendable, Hashable {
    /// The shard.
    public var shard: CatalogShard
    /// Items in the whole list.
    public var listed: Int
    /// Items of this shard.
    public var assigned: Int
    /// Items made in this run.
    public var done: Int
    /// Items found complete.
    public var skipped: Int
    /// Items that failed.
    public var failed: Int
    /// Items under way when the run was cancelled.
    public var cancelled: Int
    /// Staging folders of killed runs removed at the start.
    public var staleRemoved: Int
    /// Wall-clock seconds.
    public var seconds: Double
}

/// One item's end, as a run reports it.
public struct CatalogItemOutcome: Sendable {
    /// How it ended.
    public enum Kind: String, Sendable {
        /// Made in this run.
        case done
        /// Already complete.
        case skipped
        /// Could not be made.
        case failed
        /// Stopped with the run (SIGTERM): left for the next run, not recorded.
        case cancelled
    }

    /// The item.
    public var item: CatalogItem
    /// How it ended.
    public var kind: Kind
    /// Its key, when its identity could be read.
    public var key: ContentKey?
    /// The line written to the results, if one was (a complete item found with its line already written has
    /// none).
    public var record: CatalogRecord?
}
