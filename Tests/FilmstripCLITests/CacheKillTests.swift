import FilmstripImaging
import FilmstripLoading
import FilmstripTesting
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `filmstrip thumbnail` fills its disk cache from a loopback server and is killed with SIGKILL at random points,
/// a third of them the moment it starts writing a cache entry. No partial or corrupt entry is ever served, offline
/// reads work for every complete entry, and an entry truncated on disk is detected and dropped.
///
/// `FILMSTRIP_KILL_ITERATIONS` sets the number of kills (default 200).
@Suite("The disk cache under kill -9")
struct CacheKillTests {
    static let iterations = Int(ProcessInfo.processInfo.environment["FILMSTRIP_KILL_ITERATIONS"] ?? "") ?? 200
    static let tracks = 12
    static let sheetsPerTrack = 4

    @Test("killed writers never leave an entry that is served partial or corrupt; a truncated entry is dropped")
    func kills() async throws {
        let binary = try cliExecutable().path
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cacheDirectory = directory.url.appendingPathComponent("cache").path
        try FileManager.default.createDirectory(atPath: cacheDirectory, withIntermediateDirectories: true)
        let server = try LoopbackServer()
        // Sheets of 1600x900 with texture: about a megabyte each, so a write takes a while.
        var sheets: [[UInt8]] = []
        for k in 0..<Self.sheetsPerTrack {
            sheets.append(
                try SpriteSheetFixture.encoded(
                    columns: 10, rows: 10, cellWidth: 160, cellHeight: 90, firstCell: k * 7, quality: 95, texture: 60))
        }
        var expected: [String: (url: URL, bytes: [UInt8])] = [:]
        for t in 0..<Self.tracks {
            var track = "WEBVTT\n\n"
            for k in 0..<(Self.sheetsPerTrack * 100) {
                let (sheet, cell) = (k / 100, k % 100)
                track += "\(Self.time(k)) --> \(Self.time(k + 1))\n"
                track += "sheet-\(sheet).jpg#xywh=\(cell % 10 * 160),\(cell / 10 * 90),160,90\n\n"
            }
            let trackURL = server.url("/t\(t)/track.vtt")
            server.serve("/t\(t)/track.vtt", text: track)
            expected[DiskCache.fileName(for: trackURL)] = (trackURL, Array(track.utf8))
            for (k, sheet) in sheets.enumerated() {
                let url = server.url("/t\(t)/sheet-\(k).jpg")
                server.serve("/t\(t)/sheet-\(k).jpg", body: sheet, contentType: "image/jpeg")
                expected[DiskCache.fileName(for: url)] = (url, sheet)
            }
        }
        let lookup = expected
        let plan = (0..<Self.iterations * 3).map { i in
            (track: (i * 7919) % Self.tracks, at: Double((i * 104_729) % (Self.sheetsPerTrack * 100)) + 0.5)
        }
        // One thread of its own: spawning, waiting and killing block.
        let outcome = await onThreads(1, threads: 1) { _ in
            var outcome = KillOutcome()
            var random = SeededGenerator(seed: 0x4B11)
            for step in plan where outcome.kills < Self.iterations {
                let arguments = [
                    "thumbnail", server.url("/t\(step.track)/track.vtt").absoluteString, "--at", "\(step.at)",
                    "--cache-dir", cacheDirectory, "--output", directory.url.appendingPathComponent("out.jpg").path,
                ]
                let started = Date()
                // A third are killed the moment a cache write begins; the others after a random delay.
                let atWrite = outcome.kills % 3 == 0
                let ended = Self.runAndKill(
                    binary, arguments, directory: directory.url.path, cacheDirectory: cacheDirectory,
                    atWrite: atWrite, delay: Double.random(in: 0...0.1, using: &random))
                outcome.record(ended)
                outcome.check(cacheDirectory, lookup, since: started)
            }
            outcome.check(cacheDirectory, lookup, since: .distantPast)
            return outcome
        }[0]
        print(
            "kill -9: \(outcome.kills) kills (\(outcome.killedInsideWrite) inside a cache write, \(outcome.finished) "
                + "runs finished first), \(outcome.served) entries read back whole, \(outcome.corruptServed) corrupt "
                + "served, \(outcome.dropped) dropped, \(outcome.leftovers) temporary files left by killed writers")
        #expect(outcome.corruptServed == 0, "\(outcome.problems)")
        #expect(outcome.dropped == 0, "atomic writes leave no damaged entry: \(outcome.problems)")
        #expect(outcome.kills == Self.iterations)
        // A third are aimed at the start of a write; a run that finds its entries cached writes none, so a few miss.
        #expect(outcome.killedInsideWrite >= Self.iterations / 4)

        // Two runs that nothing kills complete their entries whatever the kills left (how far a killed run got depends
        // on the binary's speed: a fast build may finish no entry within the kill delays), so the checks below always
        // have whole entries to read, beside whatever the killed runs left.
        for t in 0..<2 {
            let result = try await filmstrip(
                "thumbnail", server.url("/t\(t)/track.vtt").absoluteString, "--at", "\(t * 100 + 42)", "--cache-dir",
                cacheDirectory, "--output", directory.url.appendingPathComponent("whole.jpg").path)
            #expect(result.status == 0, "\(result.stderr)")
        }
        var after = KillOutcome()
        after.check(cacheDirectory, lookup, since: .distantPast)
        #expect(after.served > 0 && after.corruptServed == 0 && after.dropped == 0, "\(after.problems)")

        // Offline, every complete entry still answers.
        server.stop()
        let cache = DiskCache(directory: URL(fileURLWithPath: cacheDirectory))
        let complete = (0..<Self.tracks).flatMap { t in (0..<Self.sheetsPerTrack).map { (t, $0) } }.filter { t, k in
            (try? cache.data(for: server.url("/t\(t)/track.vtt"))) != nil
                && (try? cache.data(for: server.url("/t\(t)/sheet-\(k).jpg"))) != nil
        }
        #expect(!complete.isEmpty)
        let output = directory.url.appendingPathComponent("offline.jpg").path
        for (t, k) in complete.prefix(6) {
            let result = try await filmstrip(
                "thumbnail", server.url("/t\(t)/track.vtt").absoluteString, "--at", "\(k * 100 + 42)", "--offline",
                "--cache-dir", cacheDirectory, "--output", output)
            #expect(result.status == 0, "\(result.stderr)")
            let (image, _) = try ImageCodec.decode(Array(Data(contentsOf: URL(fileURLWithPath: output))))
            #expect(image.width == 160 && image.height == 90)
        }

        // A planted truncated entry is found, dropped, and reported as not cached.
        let (t, k) = try #require(complete.first)
        let sheetEntry = cache.fileURL(for: server.url("/t\(t)/sheet-\(k).jpg"))
        let whole = try Data(contentsOf: sheetEntry)
        try whole.prefix(whole.count - 5000).write(to: sheetEntry)
        let truncated = try await filmstrip(
            "thumbnail", server.url("/t\(t)/track.vtt").absoluteString, "--at", "\(k * 100 + 42)", "--offline",
            "--cache-dir", cacheDirectory, "--output", output)
        #expect(truncated.status == 2)
        #expect(truncated.stderr.contains("sheet-\(k).jpg"), "\(truncated.stderr)")
        #expect(!FileManager.default.fileExists(atPath: sheetEntry.path), "the truncated entry is removed")
    }

    static func time(_ seconds: Int) -> String {
        String(format: "%02d:%02d:%02d.000", seconds / 3600, seconds / 60 % 60, seconds % 60)
    }

    enum Ended {
        case killed(insideWrite: Bool)
        case finished
    }

    /// Runs the command and kills it with SIGKILL: as soon as a `.tmp-` file appears in the cache directory
    /// (`atWrite`), or after `delay` seconds.
    static func runAndKill(
        _ binary: String, _ arguments: [String], directory: String, cacheDirectory: String, atWrite: Bool,
        delay: Double
    ) -> Ended {
        let watch = inotify_init1(Int32(IN_NONBLOCK))
        defer { close(watch) }
        _ = inotify_add_watch(watch, cacheDirectory, UInt32(IN_CREATE))
        let pid = spawnQuietly(binary, arguments)
        guard pid > 0 else { return .finished }
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64((atWrite ? 20 : delay) * 1e9)
        var status: Int32 = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            if waitpid(pid, &status, WNOHANG) == pid { return .finished }
            if atWrite {
                let count = read(watch, &buffer, buffer.count)
                if count > 0, Self.createdTemporary(buffer.prefix(count)) { break }
            }
            if DispatchTime.now().uptimeNanoseconds >= deadline { break }
            pauseWatching(microseconds: atWrite ? 50 : 500)
        }
        kill(pid, SIGKILL)
        _ = waitpid(pid, &status, 0)
        // Inside a write when the killed process left its temporary file behind.
        let names = (try? FileManager.default.contentsOfDirectory(atPath: cacheDirectory)) ?? []
        let temporaries = names.filter { $0.hasPrefix(".tmp-") }
        let inside = temporaries.contains { name in
            let path = cacheDirectory + "/" + name
            let attributes = try? FileManager.default.attributesOfItem(atPath: path)
            let modified = attributes?[.modificationDate] as? Date ?? .distantPast
            return modified.timeIntervalSinceNow > -30 && !seen.withLock { $0.contains(name) }
        }
        seen.withLock { $0.formUnion(temporaries) }
        return .killed(insideWrite: inside)
    }

    private static let seen = NSLockedSet()

    /// Whether the inotify events in `bytes` include the creation of a `.tmp-` file.
    static func createdTemporary(_ bytes: ArraySlice<UInt8>) -> Bool {
        var i = bytes.startIndex
        while i + 16 <= bytes.endIndex {
            let length = bytes[i + 12..<i + 16].reversed().reduce(0) { $0 << 8 | Int($1) }
            let name = bytes[i + 16..<min(bytes.endIndex, i + 16 + length)].prefix { $0 != 0 }
            if name.starts(with: Array(".tmp-".utf8)) { return true }
            i += 16 + length
        }
        return false
    }
}

/// Names already counted.
final class NSLockedSet: @unchecked Sendable {
    private let lock = NSLock()
    private var names: Set<String> = []
    func withLock<R>(_ body: (inout Set<String>) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&names)
    }
}

/// What the kill loop saw.
struct KillOutcome: Sendable {
    var kills = 0
    var killedInsideWrite = 0
    var finished = 0
    var served = 0
    var corruptServed = 0
    var dropped = 0
    var leftovers = 0
    var problems: [String] = []

    mutating func record(_ ended: CacheKillTests.Ended) {
        switch ended {
        case .finished: finished += 1
        case .killed(let inside):
            kills += 1
            if inside { killedInsideWrite += 1 }
        }
    }

    /// Reads every entry changed since `since` through a fresh `DiskCache` (as the next process would): what it
    /// returns must be the server's bytes exactly.
    mutating func check(_ directory: String, _ lookup: [String: (url: URL, bytes: [UInt8])], since: Date) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        leftovers = names.filter { $0.hasPrefix(".tmp-") }.count
        let cache = DiskCache(directory: URL(fileURLWithPath: directory))
        for name in names where !name.hasPrefix(".") {
            guard let (url, bytes) = lookup[name] else {
                problems.append("an entry no request made: \(name)")
                continue
            }
            let attributes = try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)
            guard let modified = attributes?[.modificationDate] as? Date, modified >= since
            else { continue }
            switch try? cache.data(for: url) {
            case let data? where Array(data) == bytes: served += 1
            case let data?:
                corruptServed += 1
                problems.append("\(url.lastPathComponent): \(data.count) bytes served, \(bytes.count) expected")
            default:
                dropped += 1
                problems.append("\(url.path) dropped")
            }
        }
    }
}
