import FilmstripFormats
import FilmstripPlayer
import FilmstripStreaming
import FilmstripTesting
import Foundation
import Testing

/// The player on every layout the `ffmpeg` CLI's HLS and DASH muxers write, over the loopback server: it plays to
/// the end, every presented frame is the source's frame at its time (across discontinuities and period
/// boundaries), and the request log shows what the bytes cost and that every request carried CMCD.
@Suite("Player on every stream layout", .serialized)
struct StreamLayoutPlaybackTests {
    @Test(
        "plays to the end with the right frames, one Range per byte-range segment, inits once, CMCD everywhere",
        arguments: StreamLayout.allCases)
    func playsLayout(_ layout: StreamLayout) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try StreamLayouts.serve(layout, on: server)
        let virtual = VirtualPlayer()
        let player = virtual.player
        let recorder = PlayerRecorder()
        recorder.observe(player)
        player.playbackRate = 2
        var configuration = PlayerConfiguration(with: url)
        configuration.cmcd = CmcdConfiguration(sessionID: "s", mode: .headers)
        player.open(config: configuration)
        await recorder.wait(for: .ended, on: virtual)
        #expect(recorder.errors.isEmpty, "\(layout): \(recorder.errors)")
        #expect(!recorder.states.contains(.error))

        // Every presented frame is the source's frame at its presentation time.
        let frames = recorder.frames
        #expect(frames.count >= Int(layout.duration * 4), "\(layout): \(frames.count) frames")
        let wrong = frames.compactMap { time, number -> String? in
            let (source, sourceTime) = layout.source(at: time + 1e-4)
            let expected = Int((sourceTime * source.frameRate + 1e-3).rounded(.down))
            return number.map({ abs($0 - expected) <= 1 }) == true
                ? nil : "t=\(time): frame \(number ?? -1), expected \(expected)"
        }
        #expect(wrong.isEmpty, "\(layout): \(wrong.count) of \(frames.count) frames wrong: \(wrong.prefix(5))")
        #expect((frames.first?.time ?? 1) < 0.1)
        #expect((frames.last?.time ?? 0) > layout.duration - 0.5, "\(layout): last frame at \(frames.last?.time ?? 0)")
        let times = frames.map(\.time)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "\(layout): frames out of order")

        try await checkRequests(server, layout: layout)
    }

    /// The request log: CMCD on every request with the right object type, one `Range` per byte-range segment, no
    /// byte fetched twice, and bytes within 1.3x of the largest rendition.
    func checkRequests(_ server: LoopbackServer, layout: StreamLayout) async throws {
        let local = StreamingClient(url: try StreamLayouts.manifest(layout))
        let presentation = try await local.presentation()
        let directory = try StreamLayouts.directory(layout).standardizedFileURL.path
        // A local file's path as the server serves it.
        func served(_ url: URL, _ range: Range<Int64>?) -> String {
            let path = "/\(layout.rawValue)" + url.standardizedFileURL.path.dropFirst(directory.count)
            return "\(path) \(range.map { "bytes=\($0.lowerBound)-\($0.upperBound - 1)" } ?? "")"
        }
        var initRequests = Set<String>()
        var rangedPaths = Set<String>()
        var largest = 0
        for period in presentation.periods {
            var largestInPeriod = 0
            for track in period.tracks where track.kind == .video {
                for rendition in track.renditions {
                    let segments = try await local.segments(of: rendition, in: presentation)
                    var total = 0
                    if case .segmentBase(let base) = rendition.segments {
                        initRequests.insert(served(base.url, base.indexRange))
                    }
                    for segment in segments {
                        total += try await local.media(segment).count
                        if segment.byteRange != nil { rangedPaths.insert(String(served(segment.url, nil).dropLast())) }
                        if let section = segment.initialization {
                            initRequests.insert(served(section.url, section.byteRange))
                        }
                    }
                    largestInPeriod = max(largestInPeriod, total)
                }
            }
            largest += largestInPeriod
        }
        let format = layout.isDASH ? "d" : "h"
        var seen = Set<String>()
        for request in server.requests {
            let key = "\(request.path) \(request.headers["range"] ?? "")"
            #expect(seen.insert(key).inserted, "\(layout): \(key) requested twice")
            let cmcd = cmcdKeys(request)
            #expect(cmcd["sf"] == format && cmcd["sid"] == "\"s\"", "\(layout): \(key) \(cmcd)")
            let objectType =
                if request.path.hasSuffix(".m3u8") || request.path.hasSuffix(".mpd") {
                    "m"
                } else if initRequests.contains(key) {
                    "i"
                } else if request.path.hasSuffix(".key") {
                    "k"
                } else {
                    "v"
                }
            if objectType == "v" {
                #expect(cmcd["ot"] == "v" || cmcd["ot"] == "av", "\(layout): \(key) \(cmcd)")
                #expect(cmcd["d"] != nil && cmcd["bl"] != nil, "\(layout): \(key) \(cmcd)")
            } else {
                #expect(cmcd["ot"] == objectType, "\(layout): \(key) \(cmcd)")
            }
            if rangedPaths.contains(request.path) {
                #expect(request.headers["range"] != nil, "\(layout): a whole-file request to \(request.path)")
            }
        }
        let sent = Set(server.requests.map(\.path)).reduce(0) { $0 + server.bytesSent($1) }
        let manifests = Set(server.requests.map(\.path).filter { $0.hasSuffix(".m3u8") || $0.hasSuffix(".mpd") })
        let budget = 1.3 * Double(largest) + Double(manifests.reduce(0) { $0 + server.bytesSent($1) }) + 4096
        #expect(Double(sent) <= budget, "\(layout): \(sent) bytes sent; the largest rendition is \(largest)")
    }
}
