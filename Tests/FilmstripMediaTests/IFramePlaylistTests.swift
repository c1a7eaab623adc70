import Filmstrip
import FilmstripMedia
import FilmstripTesting
import Foundation
import Testing

@Suite("I-frame playlists")
struct IFramePlaylistTests {
    /// Decodes `bytes` with the ffmpeg CLI and returns the counter frame number of its first picture.
    static func frameShown(by bytes: Data, width: Int, height: Int, in directory: TemporaryDirectory) throws -> Int? {
        let input = directory.file("cut-\(UUID().uuidString)")
        let output = directory.file("cut-\(UUID().uuidString).rgb")
        try bytes.write(to: input)
        try MediaFixtures.run([
            "-hide_banner", "-loglevel", "error", "-y", "-i", input.path, "-frames:v", "1", "-vf",
            "scale=\(width):\(height)", "-pix_fmt", "rgb24", "-f", "rawvideo", output.path,
        ])
        let raw = Array(try Data(contentsOf: output))
        guard raw.count == width * height * 3 else { return nil }
        let image = PixelBuffer(width: width, height: height, layout: .rgb, bytes: raw)
        return frameNumber(image)
    }

    static func cut(_ url: URL, _ range: Range<Int64>?) throws -> Data {
        let data = try Data(contentsOf: url)
        guard let range else { return data }
        return data.subdata(in: Int(range.lowerBound)..<Int(range.upperBound))
    }

    @Test(
        "every entry with its map, cut out and handed alone to the ffmpeg CLI, decodes to the keyframe at its time",
        arguments: [StreamLayout.hlsVariants, .hlsFMP4, .hlsTS, .hlsSingleFileTS, .hlsSingleFileFMP4])
    func entriesDecodeAlone(_ layout: StreamLayout) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let summary = try await IFramePlaylistGenerator.generate(
            from: try StreamLayouts.manifest(layout), to: directory.url)
        #expect(summary.playlists.count == (layout == .hlsVariants ? 2 : 1))
        #expect((summary.master != nil) == (layout == .hlsVariants))
        let playlist = try #require(summary.playlists.first)
        #expect(playlist.entries == 5 && playlist.bandwidth >= playlist.averageBandwidth)
        guard case .media(let media) = try HLSPlaylistParser().parse(Data(contentsOf: playlist.url), url: playlist.url)
        else {
            Issue.record("not a media playlist")
            return
        }
        #expect(media.iFramesOnly && !media.isLive)
        var time = 0.0
        for segment in media.segments {
            let map = try #require(segment.map)
            let bytes = try Self.cut(map.uri, map.byteRange) + (try Self.cut(segment.uri, segment.byteRange))
            let shown = try Self.frameShown(by: bytes, width: 80, height: 60, in: directory)
            #expect(shown == Int((time * 25).rounded()), "\(layout) entry at \(time) s")
            time += segment.duration
        }
        if layout == .hlsVariants, let master = summary.master {
            let text = try String(contentsOf: master, encoding: .utf8)
            #expect(text.contains("#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=") && text.contains("RESOLUTION=320x240"))
            #expect(text.contains(#"CODECS="avc1."#) && !text.contains(#"mp4a.40.2",URI"#))
            // The master still plays: its variants resolve from the output directory.
            let reread = try HLSPlaylistParser().parse(Data(contentsOf: master), url: master)
            guard case .master(let parsed) = reread else {
                Issue.record("not a master")
                return
            }
            #expect(parsed.iFrameStreams.count == 2)
            #expect(parsed.variants.allSatisfy { FileManager.default.fileExists(atPath: $0.uri.path) })
        }
        // ffprobe accepts the playlist.
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = [
            "ffprobe", "-v", "quiet", "-show_entries", "format=duration", "-of", "csv=p=0", playlist.url.path,
        ]
        let out = Pipe()
        probe.standardOutput = out
        try probe.run()
        let duration = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        probe.waitUntilExit()
        #expect(
            probe.terminationStatus == 0
                && abs((Double(duration.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) - 10) < 0.1)
    }

    @Test("TS segments after the first carry no PAT/PMT: their entries use the last tables seen, and decode alone")
    func segmentsWithoutTables() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try StreamLayouts.manifest(.hlsTS)
        let copy = directory.url.appendingPathComponent("source", isDirectory: true)
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        var stripped = 0
        for file in try FileManager.default.contentsOfDirectory(atPath: source.deletingLastPathComponent().path) {
            var data = try Data(contentsOf: source.deletingLastPathComponent().appendingPathComponent(file))
            if file.hasSuffix(".ts") && file != "seg_000.ts" {
                // Every PAT (PID 0) and PMT (ffmpeg's PID 0x1000) packet out.
                let packets = stride(from: 0, to: data.count - 187, by: 188).map { data[$0..<($0 + 188)] }
                let kept = packets.filter {
                    let pid = Int($0[$0.startIndex + 1] & 0x1F) << 8 | Int($0[$0.startIndex + 2])
                    return pid != 0 && pid != 0x1000
                }
                stripped += packets.count - kept.count
                data = kept.reduce(into: Data()) { $0 += $1 }
            }
            try data.write(to: copy.appendingPathComponent(file))
        }
        #expect(stripped >= 8)
        let output = directory.url.appendingPathComponent("out", isDirectory: true)
        let summary = try await IFramePlaylistGenerator.generate(
            from: copy.appendingPathComponent(source.lastPathComponent), to: output)
        let playlist = try #require(summary.playlists.first)
        #expect(playlist.entries == 5)
        guard case .media(let media) = try HLSPlaylistParser().parse(Data(contentsOf: playlist.url), url: playlist.url)
        else {
            Issue.record("not a media playlist")
            return
        }
        var time = 0.0
        for segment in media.segments {
            let map = try #require(segment.map)
            #expect(map.uri.lastPathComponent == "seg_000.ts")
            let bytes = try Self.cut(map.uri, map.byteRange) + (try Self.cut(segment.uri, segment.byteRange))
            let shown = try Self.frameShown(by: bytes, width: 80, height: 60, in: directory)
            #expect(shown == Int((time * 25).rounded()), "entry at \(time) s")
            time += segment.duration
        }
    }

    @Test("a DASH source or encrypted segments are clear errors")
    func refusals() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let dash = await mediaError {
            _ = try await IFramePlaylistGenerator.generate(
                from: try StreamLayouts.manifest(.dashNumber), to: directory.url)
        }
        #expect(dash?.kind == .invalidArgument)
        let aes = await mediaError {
            _ = try await IFramePlaylistGenerator.generate(from: try StreamLayouts.manifest(.hlsAES), to: directory.url)
        }
        #expect(aes?.message.contains("encrypted") == true)
    }
}
