import FilmstripTesting
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Four `filmstrip catalog generate` processes, one per shard, are started over and over on one catalog, most of
/// them killed with SIGKILL at random points; before each round a few videos change (a new modification time, so a
/// new key and new work). Then every shard runs once more to the end. The catalog must end complete, with outputs
/// byte for byte those of a single process run afterwards, one `done` line per item however often its makers were
/// killed, and nothing left in staging.
///
/// `FILMSTRIP_CATALOG_KILL_ROUNDS` sets the number of rounds of four processes (default 20).
@Suite("Catalog shards under kill -9")
struct CatalogKillTests {
    static let rounds = Int(ProcessInfo.processInfo.environment["FILMSTRIP_CATALOG_KILL_ROUNDS"] ?? "") ?? 20
    static let shards = 4

    @Test("shards killed at random points and rerun end complete, identical to one process, each item made once")
    func killsAndReruns() async throws {
        let binary = try cliExecutable().path
        let directory = try TemporaryDirectory(prefix: "filmstrip-catalog-kill")
        defer { directory.remove() }
        let videos = try CatalogFixtures.copy(into: directory.file("videos"))
        let list = try directory.write(
            "videos.txt", Array(videos.map { "videos/" + $0.lastPathComponent + "\n" }.joined().utf8))
        // Accurate mode at 5 thumbnails a second: a shard takes a few tenths of a second, so kills land inside items.
        let settings = [
            "--interval", "0.2", "--mode", "accurate", "--formats", "vtt,hls,bif", "--jobs", "1", "--cores", "1",
        ]
        let reference = directory.file("reference").path
        let catalog = directory.file("catalog").path
        let logs = directory.file("logs").path
        try FileManager.default.createDirectory(atPath: logs, withIntermediateDirectories: true)

        let outcome = await onThreads(1, threads: 1) { _ in
            var outcome = KillRounds()
            var random = SeededGenerator(seed: 0xCA7A_1065)
            for round in 0..<Self.rounds {
                for k in 0..<3 {
                    let video = videos[Int.random(in: 0..<12, using: &random)]
                    let time = Date(timeIntervalSince1970: 1_700_000_000 + Double(round * 10 + k))
                    try? FileManager.default.setAttributes([.modificationDate: time], ofItemAtPath: video.path)
                }
                let delays = (0..<Self.shards).map { _ in
                    Double.random(in: 0...1, using: &random) < 0.75
                        ? Double.random(in: 0...0.15, using: &random) : nil
                }
                outcome.run(binary, list.path, catalog, settings, delays: delays)
            }
            outcome.final = outcome.run(binary, list.path, catalog, settings, delays: [nil, nil, nil, nil])
            outcome.reference =
                probe(
                    binary, ["catalog", "generate", list.path, "--output", reference] + settings, timeout: 300,
                    directory: logs
                ).status
            return outcome
        }[0]
        print(
            "catalog kill -9: \(outcome.kills) kills in \(Self.rounds) rounds of \(Self.shards) shards "
                + "(\(outcome.killedInsideItem) while an item was being made)")
        #expect(outcome.reference == 1, "one process over the list: the broken video fails the run")
        #expect(outcome.kills >= Self.rounds, "most processes are killed")
        #expect(outcome.killedInsideItem >= Self.rounds / 2, "kills land inside items, not only between them")
        // The last round ran to the end: exit 1 for the shard with the broken video, 0 for the others.
        #expect(outcome.final.sorted() == [0, 0, 0, 1], "\(outcome.final)")

        // Byte for byte the single process's outputs (the markers, which name their host and time, aside). The
        // catalog also holds the items of the videos' earlier versions.
        let expected = try Self.outputs(reference)
        let made = try Self.outputs(catalog).filter { expected[$0.key] != nil }
        #expect(expected.count >= 12 * 4, "12 items of a sheet or more and three tracks")
        #expect(made.keys.sorted() == expected.keys.sorted())
        #expect(made == expected)
        let staging = try FileManager.default.contentsOfDirectory(atPath: catalog + "/staging")
        #expect(staging.isEmpty, "\(staging)")

        // One done line per item across all shards' results, however often its makers were killed.
        var done: [String: Int] = [:]
        var failedInputs: Set<String> = []
        for name in try FileManager.default.contentsOfDirectory(atPath: catalog + "/results") {
            let text = try String(contentsOfFile: catalog + "/results/" + name, encoding: .utf8)
            for line in text.split(separator: "\n") {
                let record = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                if record["status"] as? String == "done" { done[record["key"] as? String ?? "", default: 0] += 1 }
                if record["status"] as? String == "failed" { failedInputs.insert(record["input"] as? String ?? "") }
            }
        }
        #expect(done.count >= 12 && done.values.allSatisfy { $0 == 1 }, "\(done)")
        #expect(failedInputs == ["videos/broken.mp4"])

        let status = try await filmstrip("catalog", "status", list.path, catalog, "--json")
        #expect(status.status == 3, "only the broken video is not done: \(status.stdout)")
        #expect(status.stdout.contains(#""done": 12"#) && status.stdout.contains(#""failed": 1"#))
    }

    /// Every output file under `catalog/items`, but the completion markers, by path.
    static func outputs(_ catalog: String) throws -> [String: Data] {
        let root = catalog + "/items"
        var files: [String: Data] = [:]
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [:] }
        for case let path as String in walker where path.split(separator: "/").count == 3 {
            guard !path.hasSuffix("/filmstrip-item.json") else { continue }
            files[path] = try Data(contentsOf: URL(fileURLWithPath: root + "/" + path))
        }
        return files
    }
}

/// What the rounds saw.
struct KillRounds: Sendable {
    var reference: Int32?
    var kills = 0
    var killedInsideItem = 0
    var final: [Int32] = []

    /// Starts one process per shard and kills each whose delay is set once that delay has passed since an item was
    /// first seen in staging (so that on a loaded machine, where processes start slowly, kills still land inside
    /// items); returns the exit statuses of those that ended on their own.
    @discardableResult
    mutating func run(
        _ binary: String, _ list: String, _ catalog: String, _ settings: [String], delays: [Double?]
    )
        -> [Int32]
    {
        var pids: [pid_t] = []
        for shard in delays.indices {
            let arguments =
                ["catalog", "generate", list, "--output", catalog, "--shard", "\(shard)/\(delays.count)"] + settings
            pids.append(spawnQuietly(binary, arguments))
        }
        var statuses: [Int32] = []
        var running = Set(pids.indices.filter { pids[$0] > 0 })
        var armed: UInt64?
        while !running.isEmpty {
            if armed == nil, Self.itemInStaging(catalog) { armed = DispatchTime.now().uptimeNanoseconds }
            for i in running.sorted() {
                var status: Int32 = 0
                if waitpid(pids[i], &status, WNOHANG) == pids[i] {
                    running.remove(i)
                    if status & 0x7F == 0 { statuses.append((status >> 8) & 0xFF) }
                    continue
                }
                guard let delay = delays[i], let armed,
                    DispatchTime.now().uptimeNanoseconds - armed > UInt64(delay * 1e9)
                else { continue }
                let inside = Self.itemInStaging(catalog)
                kill(pids[i], SIGKILL)
                _ = waitpid(pids[i], &status, 0)
                running.remove(i)
                kills += 1
                if inside { killedInsideItem += 1 }
            }
            pauseWatching(microseconds: 2_000)
        }
        return statuses
    }

    /// Whether some item is being made: a folder in staging.
    static func itemInStaging(_ catalog: String) -> Bool {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: catalog + "/staging")) ?? []
        return names.contains { !$0.hasSuffix(".lock") }
    }
}
