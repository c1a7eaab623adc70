import FilmstripCatalog
import Foundation
import Testing

@Suite("Catalog shards")
struct CatalogShardTests {
    static let items = (0..<1_003).map { CatalogItem(input: "videos/\($0).mp4", url: URL(fileURLWithPath: "/v/\($0)")) }

    @Test("every item goes to exactly one shard; shards differ by at most one item", arguments: [1, 2, 3, 4, 7, 64])
    func balanced(count: Int) throws {
        var seen: [String: Int] = [:]
        var sizes: [Int] = []
        for index in 0..<count {
            let mine = try CatalogShard(index: index, count: count).assigned(Self.items)
            sizes.append(mine.count)
            for item in mine { seen[item.input, default: 0] += 1 }
        }
        #expect(seen.count == Self.items.count && seen.values.allSatisfy { $0 == 1 })
        #expect(sizes.max()! - sizes.min()! <= 1, "\(sizes)")
    }

    @Test("the assignment depends on the item, not on its place in the list; the shard keeps list order")
    func stableUnderReordering() throws {
        var random = SystemRandomNumberGenerator()
        let shuffled = Self.items.shuffled(using: &random)
        for index in 0..<4 {
            let shard = try CatalogShard(index: index, count: 4)
            let a = shard.assigned(Self.items)
            let b = shard.assigned(shuffled)
            #expect(Set(a.map(\.input)) == Set(b.map(\.input)))
            let order = Dictionary(uniqueKeysWithValues: shuffled.enumerated().map { ($1.input, $0) })
            #expect(b.map { order[$0.input]! } == b.map { order[$0.input]! }.sorted())
        }
    }

    @Test("I/N is parsed and checked")
    func parsing() throws {
        #expect(try CatalogShard(parsing: "2/5") == CatalogShard(index: 2, count: 5))
        for bad in ["5/5", "-1/4", "1", "a/b", "1/0", "0/4/2", ""] {
            #expect(throws: CatalogError.self, "\(bad)") { try CatalogShard(parsing: bad) }
        }
    }

    @Test("the batch engines' indexes: Slurm (count, min/max/step), Kubernetes and AWS Batch with --shards")
    func environments() throws {
        func resolve(
            _ environment: [String: String], shards: Int? = nil, explicit: CatalogShard? = nil
        ) throws
            -> String
        {
            let resolved = try CatalogShard.resolve(explicit: explicit, shards: shards, environment: environment)
            return "\(resolved.shard) \(resolved.source.rawValue)"
        }
        #expect(try resolve([:]) == "0/1 none")
        #expect(try resolve(["SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "4"]) == "2/4 slurm")
        #expect(
            try resolve(["SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "8"])
                == "2/8 slurm")
        #expect(
            try resolve([
                "SLURM_ARRAY_TASK_ID": "10", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "14",
                "SLURM_ARRAY_TASK_STEP": "2",
            ]) == "5/8 slurm")
        // With --shards, the task id is the shard: one task resubmitted alone (--array=2) keeps its shard.
        #expect(
            try resolve(
                [
                    "SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "1", "SLURM_ARRAY_TASK_MIN": "2",
                    "SLURM_ARRAY_TASK_MAX": "2",
                ], shards: 4) == "2/4 slurm")
        #expect(try resolve(["JOB_COMPLETION_INDEX": "7"], shards: 10) == "7/10 kubernetes")
        #expect(try resolve(["AWS_BATCH_JOB_ARRAY_INDEX": "0"], shards: 3) == "0/3 aws_batch")
        #expect(
            try resolve(["AWS_BATCH_JOB_ARRAY_INDEX": "4", "AWS_BATCH_JOB_ARRAY_SIZE": "10"]) == "4/10 aws_batch")
        #expect(
            try resolve(
                ["SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "4"], explicit: .init(index: 3, count: 5))
                == "3/5 option")
        // What cannot be worked out is an error that says what to pass.
        let refused: [([String: String], Int?)] = [
            (["JOB_COMPLETION_INDEX": "1"], nil), (["AWS_BATCH_JOB_ARRAY_INDEX": "1"], nil), ([:], 4),
            (["SLURM_ARRAY_TASK_ID": "1"], nil), (["SLURM_ARRAY_TASK_ID": "x", "SLURM_ARRAY_TASK_COUNT": "2"], nil),
            (["SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_COUNT": "4"], nil),
            (["SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_STEP": "2"], nil),
            (["SLURM_ARRAY_TASK_ID": "4"], 4),
            (["JOB_COMPLETION_INDEX": "5"], 5),
        ]
        for (environment, shards) in refused {
            #expect(throws: CatalogError.self, "\(environment) \(String(describing: shards))") {
                try resolve(environment, shards: shards)
            }
        }
        #expect(throws: CatalogError.self) { try resolve([:], shards: 3, explicit: .init(index: 0, count: 2)) }
        #expect(throws: CatalogError.self) {
            try resolve(["AWS_BATCH_JOB_ARRAY_INDEX": "1", "AWS_BATCH_JOB_ARRAY_SIZE": "3"], shards: 4)
        }
        // An array smaller than --shards leaves shards out: a warning, not an error (a resubmission is smaller too).
        let small = try CatalogShard.resolve(
            explicit: nil, shards: 5,
            environment: ["SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MAX": "2"])
        #expect(small.shard.description == "1/5" && small.warnings.count == 1)
    }
}
