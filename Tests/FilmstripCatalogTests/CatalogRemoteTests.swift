import FilmstripTesting
import Foundation
import Testing

@testable import FilmstripCatalog

@Suite("Catalog generation over HTTP")
struct CatalogRemoteTests {
    @Test("remote videos are known by ETag and length from a one-byte request; a rerun fetches nothing else")
    func remote() async throws {
        let server = try LoopbackServer()
        let clips = try CatalogFixtures.clips()
        for k in 0..<3 {
            server.serve("/v/\(k).mp4", body: Array(try Data(contentsOf: clips[k])), contentType: "video/mp4")
        }
        server.serve("/v/gone.mp4", body: [0])
        server.remove("/v/gone.mp4")
        let directory = try TemporaryDirectory(prefix: "filmstrip-catalog")
        defer { directory.remove() }
        let list = try directory.write(
            "list.txt",
            Array((0..<3).map { server.url("/v/\($0).mp4").absoluteString + "\n" }.joined().utf8)
                + Array((server.url("/v/gone.mp4").absoluteString + "\n").utf8))
        let catalog = Catalog(directory: directory.file("out"))
        let items = try CatalogList.read(list)
        let first = try await CatalogGenerator.run(
            items, shard: .whole, catalog: catalog, options: CatalogBench.options())
        #expect((first.done, first.failed) == (3, 1))
        let gone = CatalogJournal.records(in: catalog).first { $0.status == .failed }
        #expect(gone?.error?.kind == "input_unavailable" && gone?.key == nil)
        #expect(gone?.error?.message.contains("404") == true, "the cause is recorded: \(String(describing: gone))")

        let before = server.requests.count
        let second = try await CatalogGenerator.run(
            items, shard: .whole, catalog: catalog, options: CatalogBench.options())
        #expect((second.done, second.skipped) == (0, 3))
        let rerun = server.requests.dropFirst(before).filter { $0.path != "/v/gone.mp4" }
        #expect(rerun.count == 3)
        #expect(rerun.allSatisfy { $0.method == "GET" && $0.headers["range"] == "bytes=0-0" })
        #expect((0..<3).map { server.bytesSent("/v/\($0).mp4") }.allSatisfy { $0 > 0 })

        // A new version of one video (its ETag and length change): that one is made again.
        server.serve("/v/1.mp4", body: Array(try Data(contentsOf: clips[7])), contentType: "video/mp4")
        let third = try await CatalogGenerator.run(
            items, shard: .whole, catalog: catalog, options: CatalogBench.options())
        #expect((third.done, third.skipped) == (1, 2))
        let made = CatalogJournal.records(in: catalog).last { $0.status == .done }
        #expect(made?.input == server.url("/v/1.mp4").absoluteString && made?.duration == 4)
        let completion = try #require(catalog.completion(of: made!.key!))
        let size = Int64(try Data(contentsOf: clips[7]).count)
        #expect(completion.identity.etag != nil && completion.identity.size == size)

        // The server goes away: nothing is known to have changed, so the index keeps the last versions made.
        server.setReachable(false)
        let status = try await CatalogStatus.read(items, catalog: catalog)
        #expect(status.count(.unreachable) == 4 && status.orphans == 1, "the old version of 1.mp4 only")
        #expect(status.items[1].key == made?.key && status.items[1].completion != nil)
        let index = CatalogIndex(status, catalog: catalog)
        #expect(index.items.count == 3 && index.items.values.allSatisfy { $0.verified == false })
        #expect(index.unreachable.count == 4 && index.failed.isEmpty && index.missing.isEmpty)
    }
}
