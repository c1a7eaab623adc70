import FilmstripTesting
import Foundation
import Testing

@testable import FilmstripCatalog

@Suite("Catalog status and index")
struct CatalogStatusTests {
    @Test("done, failed, missing, running and (with verify) corrupt items; outputs no listed video has")
    func states() async throws {
        let bench = try CatalogBench()
        defer { bench.remove() }
        // Before the first run: every item missing, not an error (a pipeline may wait before the tasks start).
        let before = try await CatalogStatus.read(try bench.items, catalog: bench.catalog)
        #expect(!before.started && before.count(.missing) == 13)
        _ = try await bench.run()
        try touch(bench.videos[1], secondsAgo: 60)
        let held = try HeldLock(
            bench.catalog.staging.appendingPathComponent(try bench.key(bench.videos[2]).hex + ".lock").path)
        defer { held.release() }
        try touch(bench.videos[2], secondsAgo: 0)
        held.release()
        let running = try HeldLock(
            bench.catalog.staging.appendingPathComponent(try bench.key(bench.videos[2]).hex + ".lock").path)
        defer { running.release() }
        // One byte of a sheet changed on disk.
        let sheet = bench.catalog.itemDirectory(of: try bench.key(bench.videos[3])).appendingPathComponent(
            "sprite-1.jpg")
        var bytes = try Data(contentsOf: sheet)
        bytes[bytes.count / 2] ^= 0x20
        try bytes.write(to: sheet)

        let status = try await CatalogStatus.read(try bench.items, catalog: bench.catalog)
        #expect(status.items.map(\.state.rawValue)[0...4] == ["done", "missing", "running", "done", "done"])
        #expect(status.items.last?.state == .failed && status.items.last?.error?.kind == "decode_failed")
        #expect(status.orphans == 2, "clip-1's and clip-2's earlier versions")
        let verified = try await CatalogStatus.read(try bench.items, catalog: bench.catalog, verify: true)
        #expect(verified.items[3].state == .corrupt && verified.count(.corrupt) == 1)
    }

    @Test("the index maps every input to its track URLs per format and width; the rest are listed as missing or failed")
    func index() async throws {
        let bench = try CatalogBench()
        defer { bench.remove() }
        var options = CatalogBench.options()
        options.preview.additionalWidths = [96]
        options.preview.formats = [.vtt, .hls, .dash, .bif]
        _ = try await bench.run(options)
        try touch(bench.videos[5], secondsAgo: 60)
        let status = try await CatalogStatus.read(try bench.items, catalog: bench.catalog)
        let index = CatalogIndex(status, catalog: bench.catalog, baseURL: "https://cdn.example.com/previews/")
        #expect(
            index.items.count == 11 && index.missing == ["videos/clip-5.mp4"] && index.failed == ["videos/broken.mp4"])
        let entry = try #require(index.items["videos/clip-0.mp4"])
        let folder =
            "https://cdn.example.com/previews/"
            + bench.catalog.relativePath(of: try bench.key(bench.videos[0], options))
        #expect(
            entry.tracks == [
                "vtt": folder + "/thumbnails.vtt", "hls": folder + "/thumbnails.m3u8",
                "dash": folder + "/thumbnails.mpd",
                "bif": folder + "/thumbnails.bif",
            ])
        #expect(entry.widths?["96"]?["vtt"] == folder + "/w96/thumbnails.vtt")
        #expect(entry.tile.w == 160 && entry.tile.h == 90 && entry.thumbnails == 3 && entry.duration == 3)
        // Every URL names a file that is there.
        for url in entry.tracks.values {
            let path = url.replacingOccurrences(of: "https://cdn.example.com/previews/", with: "")
            #expect(FileManager.default.fileExists(atPath: bench.catalog.directory.appendingPathComponent(path).path))
        }
        let file = bench.directory.file("index.json")
        try index.write(to: file)
        let decoded = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
        #expect((decoded?["items"] as? [String: Any])?.count == 11)
    }
}
