import FilmstripMedia
import FilmstripPreviews
import FilmstripTesting
import Foundation
import Synchronization
import Testing

@testable import FilmstripCatalog

@Suite("Catalog generation: idempotent, resumable, keyed by content")
struct CatalogRunTests {
    @Test("a first run makes every good item and records the broken one; a rerun makes nothing")
    func firstRunThenRerun() async throws {
        let bench = try CatalogBench()
        defer { bench.remove() }
        let first = try await bench.run()
        #expect((first.done, first.skipped, first.failed) == (12, 0, 1))
        for video in bench.videos.dropLast() {
            let key = try bench.key(video)
            let completion = try #require(bench.catalog.completion(of: key))
            #expect(completion.input == "videos/" + video.lastPathComponent)
            #expect(Set(completion.tracks.map(\.format)) == ["vtt", "hls"])
            #expect(CatalogStatus.intact(completion, in: bench.catalog.itemDirectory(of: key)))
            #expect(completion.files.contains { $0.path == "sprite-1.jpg" })
        }
        let records = CatalogJournal.records(in: bench.catalog)
        #expect(records.count == 13)
        let broken = try #require(records.first { $0.input == "videos/broken.mp4" })
        #expect(
            broken.status == .failed && ["invalid_media", "decode_failed"].contains(broken.error?.kind), "\(broken)")
        let done = try #require(records.first { $0.input == "videos/clip-3.mp4" })
        #expect(done.outputs.allSatisfy { $0.hasPrefix(bench.catalog.relativePath(of: done.key!) + "/") })
        #expect(done.thumbnails == 6 && done.bytesWritten! > 0 && done.seconds.generate > 0)

        let before = try bench.outputs()
        let second = try await bench.run()
        #expect((second.done, second.skipped, second.failed) == (0, 12, 1))
        #expect(try bench.outputs() == before)
        let lines = CatalogJournal.records(in: bench.catalog)
        #expect(lines.filter { $0.status == .done }.count == 12, "one done line per item, ever")
        #expect(try FileManager.default.contentsOfDirectory(atPath: bench.catalog.staging.path).isEmpty)
    }

    @Test("a changed video or changed settings make exactly the affected items again, under new keys")
    func changes() async throws {
        let bench = try CatalogBench(broken: false)
        defer { bench.remove() }
        _ = try await bench.run()
        let oldKey = try bench.key(bench.videos[4])
        try touch(bench.videos[4], secondsAgo: 3600)
        let newKey = try bench.key(bench.videos[4])
        #expect(newKey != oldKey)
        let afterTouch = try await bench.run()
        // What failed, if anything did, with its error (the journal keeps it).
        let failures = CatalogJournal.records(in: bench.catalog).filter { $0.status == .failed }.map {
            "\($0.input): \($0.error.map { "\($0.kind): \($0.message)" } ?? "-")"
        }
        #expect((afterTouch.done, afterTouch.skipped) == (1, 11), "\(failures)")
        #expect(bench.catalog.isComplete(newKey) && bench.catalog.isComplete(oldKey))
        let made = CatalogJournal.records(in: bench.catalog).last { $0.status == .done }
        #expect(made?.key == newKey && made?.input == "videos/clip-4.mp4")

        // A setting that changes the outputs: everything again. One that does not (workers, jobs): nothing.
        var wider = CatalogBench.options()
        wider.preview.width = 96
        let afterWidth = try await bench.run(wider)
        #expect((afterWidth.done, afterWidth.skipped) == (12, 0))
        var busier = CatalogBench.options(jobs: 1)
        busier.preview.width = 96
        busier.workersPerItem = 1
        busier.preview.maximumThumbnails = 50
        let same = try await bench.run(busier)
        #expect((same.done, same.skipped) == (0, 12))
        // Back to the first settings: those outputs are still there.
        let back = try await bench.run()
        #expect((back.done, back.skipped) == (0, 12))
        #expect(try bench.catalog.settings() == PreviewOutputSettings(CatalogBench.options().preview))
    }

    @Test("--force makes every item again, byte for byte the same whatever the parallelism")
    func force() async throws {
        let bench = try CatalogBench(broken: false)
        defer { bench.remove() }
        _ = try await bench.run()
        let before = try bench.outputs()
        var options = CatalogBench.options(jobs: 1)
        options.force = true
        options.workersPerItem = 3
        let forced = try await bench.run(options)
        #expect((forced.done, forced.skipped) == (12, 0))
        #expect(try bench.outputs() == before)
        let lines = CatalogJournal.records(in: bench.catalog).suffix(12)
        #expect(lines.allSatisfy { $0.forced == true && $0.status == .done })
    }

    @Test("staging a killed run left is removed; a folder whose lock a live process holds is kept")
    func staleStaging() async throws {
        let bench = try CatalogBench(broken: false)
        defer { bench.remove() }
        let staging = bench.catalog.staging
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        // Killed mid-item: a folder with a lock file nobody holds, an old folder moved aside, a folder alone.
        for name in [
            "0123456789abcdef0123456789abcdef", "11111111111111111111111111111111.old",
            "22222222222222222222222222222222",
        ] {
            try FileManager.default.createDirectory(
                at: staging.appendingPathComponent(name), withIntermediateDirectories: true)
            try Data("partial".utf8).write(to: staging.appendingPathComponent(name + "/sprite-1.jpg"))
        }
        try Data().write(to: staging.appendingPathComponent("0123456789abcdef0123456789abcdef.lock"))
        // Live: another process is making this one.
        let live = "ffffffffffffffffffffffffffffffff"
        try FileManager.default.createDirectory(
            at: staging.appendingPathComponent(live), withIntermediateDirectories: true)
        let held = try HeldLock(staging.appendingPathComponent(live + ".lock").path)
        let summary = try await bench.run()
        held.release()
        #expect(summary.staleRemoved == 3)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: staging.path)) == [live, live + ".lock"])
        #expect(summary.done == 12)
    }

    @Test("an item another process is making is waited for, and reported running meanwhile")
    func waitsForTheOtherMaker() async throws {
        let bench = try CatalogBench(broken: false)
        defer { bench.remove() }
        _ = try await bench.run()
        try touch(bench.videos[0], secondsAgo: 7200)
        let key = try bench.key(bench.videos[0])
        let held = try HeldLock(bench.catalog.staging.appendingPathComponent(key.hex + ".lock").path)
        let clock = TestClock()
        var options = CatalogBench.options()
        options.lockWaitClock = clock
        let done = RunOver()
        let run = Task { [options] in
            defer { done.flag.withLock { $0 = true } }
            return try await bench.run(options)
        }
        // The run gets to the held item and waits there, looking at the lock again at each poll.
        #expect(await clock.waitForSleepers(1))
        let status = try await CatalogStatus.read(try bench.items, catalog: bench.catalog)
        #expect(status.items[0].state == .running && status.count(.done) == 11)
        for _ in 0..<5 {
            await clock.advance(by: options.lockPollInterval)
            #expect(await clock.waitForSleepers(1))
        }
        #expect(!bench.catalog.isComplete(key))
        held.release()
        // The next poll may still find the lock held for a moment: a process forked meanwhile holds the open file
        // until it execs. The clock goes on, a poll at a time, until the run is done.
        while !done.flag.withLock({ $0 }) {
            await clock.advance(by: options.lockPollInterval)
            try await Task.sleep(for: .milliseconds(20))
        }
        let summary = try await run.value
        #expect((summary.done, summary.skipped) == (1, 11))
        #expect(bench.catalog.isComplete(key))
    }

    @Test("an item complete without its done line (killed after the rename) gets a recovered line, once")
    func recovered() async throws {
        let bench = try CatalogBench(broken: false)
        defer { bench.remove() }
        _ = try await bench.run()
        try FileManager.default.removeItem(at: bench.catalog.results)
        _ = try await bench.run()
        _ = try await bench.run()
        let lines = CatalogJournal.records(in: bench.catalog)
        #expect(lines.count == 12)
        #expect(lines.allSatisfy { $0.status == .done && $0.recovered == true && $0.thumbnails != nil })
    }

    @Test("a results line cut short by a kill is cut off before the next line; readers skip what does not parse")
    func tornResultsLine() async throws {
        let bench = try CatalogBench(broken: false)
        defer { bench.remove() }
        try FileManager.default.createDirectory(at: bench.catalog.results, withIntermediateDirectories: true)
        let file = bench.catalog.results.appendingPathComponent("shard-0.jsonl")
        try Data("{\"key\":\"0123\",\"input\":\"videos/cl".utf8).write(to: file)
        _ = try await bench.run()
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(text.hasPrefix("{") && text.hasSuffix("}\n") && !text.contains("\"0123\""))
        #expect(text.split(separator: "\n").count == 12)
        #expect(CatalogJournal.records(in: bench.catalog).count == 12)
    }

    @Test("settings out of range are refused before the catalog is touched; a count makes the interval irrelevant")
    func settings() async throws {
        let bench = try CatalogBench(broken: false)
        defer { bench.remove() }
        var bad = CatalogBench.options()
        bad.preview.width = 7
        await #expect {
            _ = try await bench.run(bad)
        } throws: { ($0 as? CatalogError)?.kind == .invalidSettings }
        #expect(!FileManager.default.fileExists(atPath: bench.catalog.directory.path))
        var counted = CatalogBench.options()
        counted.preview.count = 3
        _ = try await bench.run(counted)
        counted.preview.interval = 7
        let again = try await bench.run(counted)
        #expect((again.done, again.skipped) == (0, 12))
    }

    @Test("the sheet format is part of the key; JPEG keys are the ones made before WebP existed")
    func imageFormatKey() throws {
        var preview = CatalogBench.options().preview
        let jpeg = PreviewOutputSettings(preview)
        #expect(jpeg.imageFormat == nil)
        let encoded = try JSONEncoder().encode(jpeg)
        #expect(!String(decoding: encoded, as: UTF8.self).contains("imageFormat"))
        preview.imageFormat = .webp
        let webp = PreviewOutputSettings(preview)
        #expect(webp.imageFormat == "webp")
        let identity = ItemIdentity(location: "https://example.com/a.mp4", size: 1)
        #expect(ContentKey(identity: identity, settings: jpeg) != ContentKey(identity: identity, settings: webp))
        // Read back from catalog.json, the format is applied again.
        let decoded = try JSONDecoder().decode(PreviewOutputSettings.self, from: try JSONEncoder().encode(webp))
        #expect(try decoded.applied(to: PreviewTrackConfiguration()).imageFormat == .webp)
    }

    @Test("one content key: pinned for the defaults, names part of it only when not the defaults, serve's the same")
    func oneContentKey() throws {
        let identity = ItemIdentity(location: "https://example.com/a.mp4", size: 1)
        let defaults = PreviewOutputSettings(PreviewTrackConfiguration())
        // Pinned: a change here would make every catalog's outputs again.
        #expect(ContentKey(identity: identity, settings: defaults).hex == "5024d17a676fa266a46924846d7f6bfa")
        let encoded = String(decoding: try JSONEncoder().encode(defaults), as: UTF8.self)
        #expect(!encoded.contains("trackName") && !encoded.contains("sheetPrefix"))
        var renamed = PreviewTrackConfiguration()
        renamed.trackName = "previews.vtt"
        let other = PreviewOutputSettings(renamed)
        #expect(other.trackName == "previews.vtt")
        #expect(ContentKey(identity: identity, settings: other) != ContentKey(identity: identity, settings: defaults))
        #expect(try other.applied(to: PreviewTrackConfiguration()).trackName == "previews.vtt")
        // One function: what the key hashes is the identity's text and the settings, whoever asks.
        #expect(defaults.contentKey(of: identity.canonical) == ContentKey(identity: identity, settings: defaults).hex)
    }

    @Test("two processes on the same shard at once: each item made once, one done line each")
    func sameShardTwice() async throws {
        let bench = try CatalogBench(broken: false)
        defer { bench.remove() }
        let options = {
            var options = CatalogBench.options(jobs: 1)
            options.lockPollInterval = .milliseconds(20)
            return options
        }()
        async let first = bench.run(options)
        async let second = bench.run(options)
        let (a, b) = try await (first, second)
        let records = CatalogJournal.records(in: bench.catalog)
        let done = records.filter { $0.status == .done }
        // On a failure, every failed line and every line of the items without a done line, to see what became of them.
        let missing = Set(records.map(\.input)).subtracting(done.map(\.input))
        let lines = records.filter { missing.contains($0.input) || $0.status == .failed }.map {
            "\($0.input): \($0.status) \($0.error as Any)"
        }
        #expect(
            a.done + b.done == 12 && a.skipped + b.skipped == 12,
            "done \(a.done)+\(b.done), skipped \(a.skipped)+\(b.skipped), failed \(a.failed)+\(b.failed); \(lines)")
        #expect(done.count == 12 && Set(done.compactMap(\.key)).count == 12, "\(done.map(\.input)); \(lines)")
    }
}

/// Set once a catalog run a test started is over.
final class RunOver: Sendable {
    let flag = Mutex(false)
}
