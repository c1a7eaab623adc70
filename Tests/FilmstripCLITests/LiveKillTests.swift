import FilmstripFormats
import FilmstripTesting
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `filmstrip generate --live` killed with SIGKILL at random points and started again, over and over, on a live
/// stream the `ffmpeg` CLI's HLS muxer makes in real time: between runs, every published track file parses, names
/// only sheets that exist, and its media sequence never goes back; the last run ends with the stream and the track
/// is complete. `FILMSTRIP_LIVE_KILLS` sets the number of kills (default 50).
@Suite("generate --live under kill -9")
struct LiveKillTests {
    static let kills = Int(ProcessInfo.processInfo.environment["FILMSTRIP_LIVE_KILLS"] ?? "") ?? 50

    @Test("killed at random points and started again: the track is always valid and ends complete")
    func killsAndRestarts() async throws {
        let binary = try cliExecutable().path
        let server = try LoopbackServer()
        defer { server.stop() }
        // Long enough for every kill: about half a second each, and a restart.
        let origin = try FFmpegLiveOrigin(.hls, server: server, seconds: Self.kills + 15, window: 10)
        defer { origin.stop() }
        #expect(origin.waitForManifest())
        let output = try TemporaryDirectory(prefix: "filmstrip-live-kill")
        defer { output.remove() }
        let arguments = [
            "generate", origin.url.absoluteString, "--live", "--output", output.url.path, "--interval", "1",
            "--sheet-span", "2", "--columns", "2", "--rows", "1", "--formats", "vtt,json,hls,dash",
        ]
        let directory = output.url
        let logs = try TemporaryDirectory(prefix: "filmstrip-live-kill-logs")
        defer { logs.remove() }
        let logFolder = logs.url.path
        let (problems, final) = await onThreads(1, threads: 1) { _ in
            var problems: [String] = []
            var sequence = Int.min
            var random = SeededGenerator(seed: 0x11FE)
            for kill in 0..<Self.kills {
                let pid = spawnQuietly(binary, arguments)
                pauseWatching(microseconds: UInt32.random(in: 100_000...900_000, using: &random))
                Glibc.kill(pid, SIGKILL)
                var status: Int32 = 0
                waitpid(pid, &status, 0)
                problems += Self.check(directory, sequence: &sequence).map { "after kill \(kill): \($0)" }
            }
            let final = probe(binary, arguments, timeout: 180, directory: logFolder)
            problems += Self.check(directory, sequence: &sequence).map { "at the end: \($0)" }
            return (problems, final)
        }[0]
        #expect(problems.isEmpty, "\(problems.prefix(10))")
        #expect(final.status == 0, "\(final.stderr)")
        let playlist = try String(contentsOf: output.file("thumbnails.m3u8"), encoding: .utf8)
        #expect(playlist.hasSuffix("#EXT-X-ENDLIST\n"))
        // Complete: consecutive cues to the end of the stream, none twice.
        let vtt = output.file("thumbnails.vtt")
        let cues = try WebVTTThumbnailParser().parse(try Data(contentsOf: vtt), trackURL: vtt).cues
        let starts = cues.map(\.startMilliseconds)
        #expect(Set(starts).count == starts.count && starts == starts.sorted())
        #expect(cues.count >= 8, "\(cues.count) cues")
    }

    /// What is wrong with the published track now (nothing before the first publication).
    static func check(_ directory: URL, sequence: inout Int) -> [String] {
        var problems: [String] = []
        let files = Set((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
        let playlistURL = directory.appendingPathComponent("thumbnails.m3u8")
        if let data = try? Data(contentsOf: playlistURL) {
            do {
                guard case .media(let media) = try HLSPlaylistParser().parse(data, url: playlistURL) else {
                    return ["the image playlist is not a media playlist"]
                }
                if media.mediaSequence < sequence {
                    problems.append("the media sequence went back from \(sequence) to \(media.mediaSequence)")
                }
                sequence = max(sequence, media.mediaSequence)
                for segment in media.segments where !segment.gap && !files.contains(segment.reference) {
                    problems.append("the playlist names \(segment.reference), which is not there")
                }
            } catch {
                problems.append("the image playlist does not parse: \(error)")
            }
        }
        let vtt = directory.appendingPathComponent("thumbnails.vtt")
        if let data = try? Data(contentsOf: vtt) {
            do {
                let track = try WebVTTThumbnailParser().parse(data, trackURL: vtt)
                for image in track.images where !files.contains(image.lastPathComponent) {
                    problems.append("the WebVTT track names \(image.lastPathComponent), which is not there")
                }
            } catch {
                problems.append("the WebVTT track does not parse: \(error)")
            }
        }
        if let data = try? Data(contentsOf: directory.appendingPathComponent("thumbnails.json")) {
            let objects = (try? JSONSerialization.jsonObject(with: data)) as? [[String: Any]]
            if let objects {
                for url in Set(objects.compactMap { $0["url"] as? String }) where !files.contains(url) {
                    problems.append("the JSON track names \(url), which is not there")
                }
            } else {
                problems.append("the JSON track does not parse")
            }
        }
        return problems
    }
}
