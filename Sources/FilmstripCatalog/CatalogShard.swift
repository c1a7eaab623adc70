import Crypto
import Foundation

/// One part of a catalog run: shard `index` of `count`.
///
/// Items are assigned by what they are, not where they stand in the list: every item's input is hashed
/// (SHA-256), the items are put in hash order, and the item at position `p` of that order goes to shard
/// `p % count`. So the assignment is the same in every process that reads the list, does not change when the list
/// is reordered, and gives every shard the same number of items, give or take one.
public struct CatalogShard: Sendable, Hashable, CustomStringConvertible {
    /// This shard, from 0.
    public let index: Int
    /// The number of shards.
    public let count: Int

    /// Shard `index` of `count`.
    public init(index: Int, count: Int) throws(CatalogError) {
        guard count >= 1, count <= 1_000_000 else {
            throw CatalogError(.invalidShard, "the shard count must be between 1 and 1000000 (got \(count))")
        }
        guard (0..<count).contains(index) else {
            throw CatalogError(.invalidShard, "shard \(index) is not one of 0..<\(count)")
        }
        self.index = index
        self.count = count
    }

    /// The whole list in one shard.
    public static let whole = CatalogShard(unchecked: 0, of: 1)

    private init(unchecked index: Int, of count: Int) {
        self.index = index
        self.count = count
    }

    /// Parses `I/N`.
    public init(parsing text: String) throws(CatalogError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else {
            throw CatalogError(.invalidShard, "a shard is written I/N, like 0/4 (got \"\(text)\")")
        }
        try self.init(index: index, count: count)
    }

    /// `I/N`.
    public var description: String { "\(index)/\(count)" }

    /// The items of this shard, in list order.
    public func assigned(_ items: [CatalogItem]) -> [CatalogItem] {
        guard count > 1 else { return items }
        let order = items.indices.map { (digest: Self.digest(items[$0].input), item: $0) }.sorted { a, b in
            a.digest != b.digest
                ? a.digest.lexicographicallyPrecedes(b.digest) : items[a.item].input < items[b.item].input
        }
        var mine: [Int] = []
        for (position, entry) in order.enumerated() where position % count == index { mine.append(entry.item) }
        return mine.sorted().map { items[$0] }
    }

    private static func digest(_ input: String) -> [UInt8] { Array(SHA256.hash(data: Data(input.utf8))) }
}

extension CatalogShard {
    /// Where a shard came from, for the run's first report line.
    public enum Source: String, Sendable {
        /// `--shard I/N`.
        case option
        /// A Slurm job array (`SLURM_ARRAY_TASK_ID`).
        case slurm
        /// A Kubernetes Indexed Job (`JOB_COMPLETION_INDEX`).
        case kubernetes
        /// An AWS Batch array job (`AWS_BATCH_JOB_ARRAY_INDEX`).
        case awsBatch = "aws_batch"
        /// No shard given: the whole list.
        case none
    }

    /// The shard to run: `explicit` (`--shard I/N`) if given, else the batch engine's own index from `environment`,
    /// else the whole list.
    ///
    /// - Slurm: with `shards`, `SLURM_ARRAY_TASK_ID` is the index (so resubmitting only some tasks, `--array=2,5`,
    ///   keeps their shards). Without, the index is `SLURM_ARRAY_TASK_ID` less `SLURM_ARRAY_TASK_MIN`, divided by
    ///   `SLURM_ARRAY_TASK_STEP` (so `--array=1-8` and `--array=0-14:2` work), and the count is
    ///   `SLURM_ARRAY_TASK_COUNT`, else worked out from `SLURM_ARRAY_TASK_MAX`: right for a whole array.
    /// - Kubernetes Indexed Job: `JOB_COMPLETION_INDEX`; the count is `shards` (the Job's `completions`, which the
    ///   pod is not told).
    /// - AWS Batch array job: `AWS_BATCH_JOB_ARRAY_INDEX`; the count is `shards`, else `AWS_BATCH_JOB_ARRAY_SIZE`.
    public static func resolve(
        explicit: CatalogShard?, shards: Int?, environment: [String: String]
    )
        throws(CatalogError) -> Resolution
    {
        if let explicit {
            if let shards, shards != explicit.count {
                throw CatalogError(.invalidShard, "--shard \(explicit) and --shards \(shards) disagree")
            }
            return Resolution(shard: explicit, source: .option)
        }
        func number(_ name: String) throws(CatalogError) -> Int? {
            guard let text = environment[name], !text.isEmpty else { return nil }
            guard let value = Int(text.trimmingCharacters(in: .whitespaces)) else {
                throw CatalogError(.invalidShard, "\(name)=\(text) is not a number")
            }
            return value
        }
        if let id = try number("SLURM_ARRAY_TASK_ID") {
            // With --shards, task ids are shard indexes: resubmitting some tasks (`--array=2,5`) keeps their shards.
            if let shards {
                var warnings: [String] = []
                if let maximum = try number("SLURM_ARRAY_TASK_MAX"), let count = try number("SLURM_ARRAY_TASK_COUNT"),
                    count > 1, maximum < shards - 1
                {
                    warnings.append(
                        "--shards \(shards), but this array's highest task is \(maximum): shards \(maximum + 1) and up "
                            + "are not run by it")
                }
                return Resolution(shard: try CatalogShard(index: id, count: shards), source: .slurm, warnings: warnings)
            }
            let minimum = try number("SLURM_ARRAY_TASK_MIN") ?? 0
            let step = max(1, try number("SLURM_ARRAY_TASK_STEP") ?? 1)
            guard id >= minimum, (id - minimum) % step == 0 else {
                throw CatalogError(
                    .invalidShard,
                    "Slurm array task \(id) is not on the array's grid (min \(minimum), step \(step)): pass --shards N")
            }
            var count = try number("SLURM_ARRAY_TASK_COUNT")
            if count == nil, let maximum = try number("SLURM_ARRAY_TASK_MAX") { count = (maximum - minimum) / step + 1 }
            guard let count else {
                throw CatalogError(.invalidShard, "Slurm does not say the array's size: pass --shards N")
            }
            return Resolution(shard: try CatalogShard(index: (id - minimum) / step, count: count), source: .slurm)
        }
        if let index = try number("JOB_COMPLETION_INDEX") {
            guard let shards else {
                throw CatalogError(
                    .invalidShard,
                    "JOB_COMPLETION_INDEX is set, but a Kubernetes Indexed Job does not tell its pods the Job's "
                        + "completions: pass --shards N")
            }
            return Resolution(shard: try CatalogShard(index: index, count: shards), source: .kubernetes)
        }
        if let index = try number("AWS_BATCH_JOB_ARRAY_INDEX") {
            let size = try number("AWS_BATCH_JOB_ARRAY_SIZE")
            if let shards, let size, shards != size {
                throw CatalogError(
                    .invalidShard,
                    "--shards \(shards) and AWS_BATCH_JOB_ARRAY_SIZE=\(size) disagree: items would be missed")
            }
            guard let count = shards ?? size else {
                throw CatalogError(
                    .invalidShard, "AWS_BATCH_JOB_ARRAY_INDEX is set without AWS_BATCH_JOB_ARRAY_SIZE: pass --shards N")
            }
            return Resolution(shard: try CatalogShard(index: index, count: count), source: .awsBatch)
        }
        if let shards {
            throw CatalogError(
                .invalidShard,
                "--shards \(shards) needs this process's index: --shard I/N, or a Slurm, Kubernetes or AWS Batch array")
        }
        return Resolution(shard: .whole, source: .none)
    }

    /// The shard a process runs, where it came from, and what looks wrong without being an error.
    public struct Resolution: Sendable, Hashable {
        /// The shard.
        public var shard: CatalogShard
        /// Where it came from.
        public var source: Source
        /// Settings that will leave items out (say so on standard error).
        public var warnings: [String] = []
    }
}
