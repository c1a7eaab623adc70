import FilmstripTesting
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("filmstrip catalog")
struct CatalogCLITests {
    @Test("SIGTERM stops a run cleanly (exit 143, staging removed, nothing recorded for the item under way)")
    func sigterm() async throws {
        let (directory, list) = try Self.clips()
        defer { directory.remove() }
        let catalog = directory.file("catalog").path
        let binary = try cliExecutable().path
        let arguments = [
            "catalog", "generate", list.path, "--output", catalog, "--mode", "accurate", "--interval", "0.1",
        ]
        let ended = await onThreads(1, threads: 1) { _ -> (status: Int32, inside: Bool) in
            let pid = spawnQuietly(binary, arguments)
            guard pid > 0 else { return (-1, false) }
            // Once an item is being made (after the first is done), stop the run.
            var inside = false
            for _ in 0..<3000 {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: catalog + "/staging")) ?? []
                let results = (try? String(contentsOfFile: catalog + "/results/shard-0.jsonl", encoding: .utf8)) ?? ""
                if !results.isEmpty, names.contains(where: { !$0.hasSuffix(".lock") }) {
                    inside = true
                    break
                }
                pauseWatching(microseconds: 2_000)
            }
            kill(pid, SIGTERM)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
            return ((status & 0x7F) == 0 ? (status >> 8) & 0xFF : -(status & 0x7F), inside)
        }[0]
        #expect(ended.inside, "the signal came while an item was being made")
        #expect(ended.status == 143)
        let staging = try FileManager.default.contentsOfDirectory(atPath: catalog + "/staging")
        #expect(staging.isEmpty, "\(staging)")
        let results = try String(contentsOfFile: catalog + "/results/shard-0.jsonl", encoding: .utf8)
        #expect(!results.contains("cancelled") && !results.contains("\"failed\""))
        let rerun = try await filmstripArguments(arguments)
        #expect(rerun.status == 0, "\(rerun.stderr)")
        let status = try await filmstrip("catalog", "status", list.path, catalog)
        #expect(status.status == 0 && status.stdout.contains("12 items: 12 done"), "\(status.stdout)")
    }

    @Test("an output changed on disk is corrupt to status --verify and made again by generate --verify")
    func verifyAndRepair() async throws {
        let (directory, list) = try Self.clips()
        defer { directory.remove() }
        let catalog = directory.file("catalog").path
        let made = try await filmstrip("catalog", "generate", list.path, "--output", catalog, "--json")
        #expect(made.status == 0, "\(made.stderr)")
        let record = try #require(
            made.stdout.split(separator: "\n").first.flatMap {
                try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            })
        let folder = catalog + "/" + (record["directory"] as? String ?? "")
        let sheet = URL(fileURLWithPath: folder + "/sprite-1.jpg")
        var bytes = try Data(contentsOf: sheet)
        bytes[bytes.count / 2] ^= 0x40
        try bytes.write(to: sheet)
        let plain = try await filmstrip("catalog", "status", list.path, catalog)
        #expect(plain.status == 0, "without --verify the marker is trusted")
        let verified = try await filmstrip("catalog", "status", list.path, catalog, "--verify")
        #expect(verified.status == 1 && verified.stdout.contains("corrupt"), "\(verified.stdout)")
        let repaired = try await filmstrip("catalog", "generate", list.path, "--output", catalog, "--verify")
        #expect(repaired.status == 0 && repaired.stdout.contains("1 made, 11 already complete"), "\(repaired.stdout)")
        let again = try await filmstrip("catalog", "status", list.path, catalog, "--verify")
        #expect(again.status == 0, "\(again.stdout)")
        #expect(try Data(contentsOf: sheet) != bytes)
    }

    /// The twelve catalog clips in a temporary folder, and a list of them.
    static func clips() throws -> (TemporaryDirectory, URL) {
        let directory = try TemporaryDirectory(prefix: "filmstrip-catalog-cli")
        let videos = try CatalogFixtures.copy(into: directory.file("videos"), broken: false)
        let list = try directory.write(
            "videos.txt", Array(videos.map { "videos/" + $0.lastPathComponent + "\n" }.joined().utf8))
        return (directory, list)
    }
}
