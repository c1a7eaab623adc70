import Filmstrip
import FilmstripTesting
import Foundation

/// Lookup on a three-hour track read from every format, and prefetch waves against loading sheets in order over a
/// shared 8 Mbit/s link.
enum FormatBenchmark {
    static func run(_ fixture: BenchFixture) async throws {
        lookups()
        try await prefetch(fixture)
    }

    /// The same 10,800 one-second thumbnails on 108 sheets of 10x10, written in every format.
    static func tracks() throws -> [(String, ThumbnailTrack)] {
        let base = URL(string: "https://cdn.example.com/title/thumbs/")!
        var out: [(String, ThumbnailTrack)] = []
        let vtt = TrackFixture.sprites(count: BenchFixture.cueCount, sheetName: { "sheets/sprite-\($0).jpg" })
        out.append(
            (
                "webvtt",
                try WebVTTThumbnailParser().parse(Array(vtt.utf8), trackURL: base.appendingPathComponent("t.vtt"))
            ))
        var hls = "#EXTM3U\n#EXT-X-TARGETDURATION:100\n#EXT-X-IMAGES-ONLY\n"
        for s in 1...BenchFixture.sheetCount {
            hls += "#EXT-X-TILES:RESOLUTION=160x90,LAYOUT=10x10,DURATION=1\n#EXTINF:100,\nsheets/sprite-\(s).jpg\n"
        }
        let hlsURL = base.appendingPathComponent("images.m3u8")
        if case .media(let media) = try HLSPlaylistParser().parse(Array((hls + "#EXT-X-ENDLIST\n").utf8), url: hlsURL) {
            out.append(("hls", media.thumbnailTrack(url: hlsURL)))
        }
        let mpd = """
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT3H"><Period>
            <AdaptationSet contentType="image" mimeType="image/jpeg">
            <EssentialProperty schemeIdUri="http://dashif.org/thumbnail_tile" value="10x10"/>
            <SegmentTemplate duration="100" media="sheets/sprite-$Number$.jpg"/>
            <Representation id="t" bandwidth="1000" width="1600" height="900"/></AdaptationSet></Period></MPD>
            """
        let mpdURL = base.appendingPathComponent("manifest.mpd")
        let presentation = try DASHManifestParser().parse(Array(mpd.utf8), url: mpdURL)
        let segments = presentation.periods[0].tracks[0].renditions[0].segments.references ?? []
        out.append(
            (
                "dash",
                ThumbnailTrack(
                    sheets: segments.map {
                        .init(
                            url: $0.url, byteRange: nil, start: $0.start, duration: $0.duration,
                            layout: .init(columns: 10, rows: 10), tileDuration: nil)
                    }, sourceURL: mpdURL, format: .dash)
            ))
        let image: [UInt8] = [0xFF, 0xD8, 0xFF, 0xD9]
        let bif = BIFFixture.make(
            images: Array(repeating: image, count: BenchFixture.cueCount),
            timestamps: (0..<BenchFixture.cueCount).map { UInt32($0) })
        out.append(("bif", try BIFParser().parse(bif, url: base.appendingPathComponent("t.bif"))))
        let tiles = (0..<BenchFixture.cueCount).map { k in
            #"{"start": \#(k), "x": \#((k % 10) * 160), "y": \#(((k / 10) % 10) * 90)}"#
        }
        let json =
            #"{"url": "sheet.jpg", "tile_width": 160, "tile_height": 90, "duration": 10800, "tiles": [\#(tiles.joined(separator: ","))]}"#
        out.append(("json", try StoryboardParser().parse(Data(json.utf8), url: base.appendingPathComponent("s.json"))))
        return out
    }

    static func lookups() {
        print("Lookup, containing policy, on a 3-hour track of \(BenchFixture.cueCount) cues read from each format")
        var seed: UInt64 = 0x243F_6A88_85A3_08D3
        let times = (0..<4096).map { _ -> Double in
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(seed >> 11) / Double(1 << 53) * Double(BenchFixture.cueCount)
        }
        guard let all = try? tracks() else {
            print("  (could not build the tracks)")
            return
        }
        for (name, track) in all {
            let index = ThumbnailIndex(cues: track.cues)
            var checksum = 0
            let rounds = 300
            let start = now()
            for _ in 0..<rounds {
                for t in times { checksum &+= index.lookup(t, policy: .containing) ?? 0 }
            }
            let ns = Double(now() - start) / Double(rounds * times.count)
            print(
                "  \(name.padding(toLength: 8, withPad: " ", startingAt: 0)) \(track.cues.count) cues  \(format(ns, 1)) ns/op   (checksum \(checksum % 9973))"
            )
        }
        print("")
    }

    /// How soon every time has a preview within one sheet of it, with prefetch waves against loading sheets in
    /// order, both with four downloads at a time over one 8 Mbit/s link.
    static func prefetch(_ fixture: BenchFixture) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.serve("/thumbnails.vtt", text: fixture.trackText)
        for (i, sheet) in fixture.sheets.enumerated() { server.serve("/sheets/sprite-\(i + 1).jpg", body: sheet) }
        server.limitLink(bytesPerSecond: 1_000_000)
        let sheetSeconds = Double(BenchFixture.cueCount / BenchFixture.sheetCount)
        func covered(_ thumbnails: TrackThumbnails) -> Bool {
            // Every time has an available thumbnail within one sheet's time of it.
            var available: [Double] = []
            for s in 0..<BenchFixture.sheetCount {
                let t = Double(s) * sheetSeconds + 1
                if thumbnails.availability(at: t) != .remote { available.append(Double(s)) }
            }
            guard !available.isEmpty else { return false }
            var previous = -1.0
            for s in available {
                if s - previous > 3 { return false }  // a sheet with no loaded neighbour within one sheet
                previous = s
            }
            return Double(BenchFixture.sheetCount - 1) - previous <= 1
        }
        var results: [String: Double] = [:]
        for mode in ["in order", "waves"] {
            let cache = try TemporaryDirectory(prefix: "filmstrip-bench-prefetch")
            defer { cache.remove() }
            var configuration = ThumbnailsConfiguration()
            configuration.cacheDirectory = cache.url
            configuration.loadingMode = .lazy
            configuration.prefetchConcurrency = 4
            let thumbnails = TrackThumbnails(configuration: configuration)
            try await thumbnails.load(track: server.url("/thumbnails.vtt"))
            let start = now()
            if mode == "waves" {
                thumbnails.prefetch(around: 0, direction: .forward)
            } else {
                let sheets = (0..<BenchFixture.sheetCount).map { Double($0) * sheetSeconds + 1 }
                Task.detached {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        var next = 0
                        for _ in 0..<4 {
                            let t = sheets[next]
                            next += 1
                            group.addTask { _ = try await thumbnails.thumbnail(at: t) }
                        }
                        while try await group.next() != nil, next < sheets.count {
                            let t = sheets[next]
                            next += 1
                            group.addTask { _ = try await thumbnails.thumbnail(at: t) }
                        }
                    }
                }
            }
            while !covered(thumbnails) { try await Task.sleep(nanoseconds: 20_000_000) }
            results[mode] = Double(now() - start) / 1e9
            // Let the downloads under way finish so the next run has the link to itself.
            thumbnails.reset()
            try await Task.sleep(nanoseconds: 3_000_000_000)
        }
        let waves = results["waves"] ?? 0
        let order = results["in order"] ?? 0
        print(
            "Prefetch, 3-hour track, \(BenchFixture.sheetCount) sheets (\(format(Double(fixture.sheetBytes) / 1e6, 1)) MB), one 8 Mbit/s link, 4 downloads at a time"
        )
        print("  every time within one sheet of a loaded preview:")
        print("    prefetch waves     \(format(waves, 2)) s")
        print("    sheets in order    \(format(order, 2)) s   waves \(format(order / max(waves, 1e-9), 1))x sooner")
        print("")
    }
}
