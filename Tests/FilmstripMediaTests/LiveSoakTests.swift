import Filmstrip
import FilmstripMedia
import FilmstripSync
import FilmstripTesting
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A day of live stream on the test clock: memory and the output folder stay flat.
@Suite("Live preview tracks over 24 hours")
struct LiveSoakTests {
    @Test("24 simulated hours of live DASH: the folder, the state and the process's memory stay bounded")
    func day() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let clock = TestClock()
        let wall = clock.wallClock()
        let hours = Int(ProcessInfo.processInfo.environment["FILMSTRIP_SOAK_HOURS"] ?? "") ?? 24
        let live = try SimulatedLiveDASH(
            server: server, timeShiftBufferDepth: 120, segments: hours * 3600 + 200, now: wall)
        let output = try TemporaryDirectory(prefix: "filmstrip-live-soak")
        defer { output.remove() }
        var configuration = LiveGenerationTests.configuration(clock: clock, wall: wall)
        configuration.preview.interval = 30
        configuration.preview.columns = 4
        configuration.preview.formats = [.vtt, .json, .hls, .dash]
        configuration.window = 1800
        let generator = LivePreviewTrackGenerator(source: live.url, directory: output.url, configuration: configuration)
        let published = Mutex(0)
        let run = Task { try await generator.run { _ in published.withLock { $0 += 1 } } }
        var samples: [(hour: Int, files: Int, bytes: Int, rssKiB: Int)] = []
        for minute in 1...(hours * 60) {
            guard await clock.waitForSleepers(1) else { break }
            await clock.advance(by: .seconds(60))
            if minute % 60 == 0 {
                _ = await clock.waitForSleepers(1)
                server.forgetRequests()
                let files = try FileManager.default.contentsOfDirectory(atPath: output.url.path)
                let bytes = try files.reduce(0) {
                    $0 + (try FileManager.default.attributesOfItem(atPath: output.file($1).path)[.size] as? Int ?? 0)
                }
                samples.append((minute / 60, files.count, bytes, Self.residentKiB()))
            }
        }
        run.cancel()
        try await run.value
        if ProcessInfo.processInfo.environment["FILMSTRIP_SOAK_REPORT"] != nil {
            for sample in samples {
                print("hour \(sample.hour): \(sample.files) files, \(sample.bytes) B, \(sample.rssKiB) KiB")
            }
        }
        // A sheet every 2 minutes: 720 a day, the window holding 15 and as many again kept for late readers.
        #expect(published.withLock { $0 } >= 700, "\(published.withLock { $0 }) publications")
        #expect(samples.count == hours)
        let sheets = samples.map(\.files).max() ?? 0
        #expect(sheets <= 40, "\(samples.map(\.files))")
        let after = samples.dropFirst(2)
        #expect(
            (after.map(\.bytes).max() ?? 0) <= 2 * (after.map(\.bytes).min() ?? 0) + 65536, "\(samples.map(\.bytes))")
        let rss = after.map(\.rssKiB)
        // Flat: before every HTTP request's memory was let go, this grew by about 0.5 MB a simulated hour.
        #expect((rss.max() ?? 0) - (rss.first ?? 0) < 16 * 1024, "RSS KiB by hour: \(samples.map(\.rssKiB))")
    }

    /// The process's resident memory, KiB, once the allocator has returned what it holds free (so what is measured
    /// is memory in use, not the allocator's fragmentation).
    static func residentKiB() -> Int {
        #if canImport(Glibc)
            // glibc's malloc_trim, which Swift's Glibc module leaves out.
            if let trim = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {
                _ = unsafeBitCast(trim, to: (@convention(c) (Int) -> Int32).self)(0)
            }
        #endif
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}
