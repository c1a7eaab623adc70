import FilmstripTesting
import Foundation
import Testing

/// Bodies that never end (a playlist, a track, an MPD, an image a track names), through every command that reads
/// them: each stops at its size limit with a typed error, at once, in bounded memory; and an MPD with an 8 MB
/// attribute is refused with a message that quotes a short excerpt, not the 8 MB.
@Suite("CLI: bodies that never end")
struct EndlessBodiesCLITests {
    /// A fault for every request the runs make.
    static func always(_ fault: LoopbackServer.Fault) -> [LoopbackServer.Fault] { Array(repeating: fault, count: 40) }

    @Test("every command stops an endless body at its limit: exit 2 (play 1), a message, under 512 MiB, never a hang")
    func endless() async throws {
        let binary = try cliExecutable().path
        let server = try LoopbackServer()
        defer { server.stop() }
        server.fail(
            "/endless.m3u8",
            with: Self.always(.neverEnding(head: "#EXTM3U\n#EXT-X-TARGETDURATION:1\n", unit: "#EXTINF:1,\nx.ts\n")))
        server.fail(
            "/endless.vtt",
            with: Self.always(.neverEnding(head: "WEBVTT\n\n", unit: "00:00.000 --> 00:01.000\na.jpg#xywh=0,0,1,1\n\n"))
        )
        server.fail(
            "/endless.mpd",
            with: Self.always(
                .neverEnding(head: "<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\" type=\"static\">", unit: "<!-- -->")))
        server.fail("/endless.jpg", with: Self.always(.neverEnding(head: "\u{FF}", unit: "A")))
        server.serve("/names-endless.vtt", text: "WEBVTT\n\n00:00.000 --> 00:05.000\nendless.jpg#xywh=0,0,16,9\n")
        // An 8 MB attribute value the parser quotes when it refuses it.
        let huge =
            "<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\" type=\"static\" mediaPresentationDuration=\""
            + String(repeating: "a", count: 8 << 20) + "\"><Period><AdaptationSet/></Period></MPD>"
        server.serve("/huge-attribute.mpd", text: huge)
        let directory = try TemporaryDirectory(prefix: "filmstrip-cli-endless")
        defer { directory.remove() }
        let url = { (path: String) in server.url(path).absoluteString }
        let runs: [[String]] = [
            ["frame", url("/endless.m3u8"), "--at", "1"],
            ["generate", url("/endless.m3u8"), "--output", directory.file("g").path],
            ["play", url("/endless.m3u8"), "--autoplay", "--duration", "2"],
            ["inspect", url("/endless.m3u8")],
            ["thumbnail", "--engine", "frames", url("/endless.m3u8"), "--at", "1"],
            ["inspect", url("/endless.vtt")],
            ["thumbnail", url("/endless.vtt"), "--at", "0.5"],
            ["thumbnail", url("/names-endless.vtt"), "--at", "0.5", "--cache-dir", directory.file("c").path],
            ["inspect", url("/endless.mpd")],
            ["frame", url("/endless.mpd"), "--at", "1"],
            ["inspect", url("/huge-attribute.mpd")],
        ]
        let root = directory.url.path
        let results = await onThreads(runs.count, threads: 2) { i in
            let folder = root + "/run-\(i)"
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            return probe(binary, runs[i], timeout: 60, directory: folder)
        }
        for (run, result) in zip(runs, results) {
            let label = run.prefix(2).joined(separator: " ")
            #expect(result.signal == nil && !result.timedOut, "\(label): \(result.stderr)")
            #expect(result.status == (run[0] == "play" ? 1 : 2), "\(label): \(result.status ?? -1) \(result.stderr)")
            #expect(result.peakRSSKiB < 512 << 10, "\(label): \(result.peakRSSKiB) KiB")
            #expect(!result.stderr.isEmpty && result.stderr.utf8.count < 2000, "\(label): \(result.stderr.prefix(300))")
            if run[1].contains("endless") {
                #expect(result.stderr.contains("limit"), "\(label): \(result.stderr)")
            }
        }
    }
}
