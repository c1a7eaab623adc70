import FilmstripSync
public import Foundation

/// HLS streams for tests and benchmarks, made with the `ffmpeg` CLI (cached like ``MediaFixtures``) and served by a
/// ``LoopbackServer``.
public enum StreamFixtures {
    /// One rendition of the VOD ladder.
    public struct Rendition: Sendable, Hashable {
        /// Width and height.
        public var width: Int
        public var height: Int
        /// Encoded bitrate in bits per second (constant: x264 pads to it).
        public var bitrate: Int
    }

    /// The VOD ladder: 20 s of `testsrc2` in 2 s MPEG-TS segments, constant bitrate, at three sizes.
    public static let ladder = [
        Rendition(width: 256, height: 144, bitrate: 200_000),
        Rendition(width: 512, height: 288, bitrate: 500_000),
        Rendition(width: 768, height: 432, bitrate: 1_200_000),
    ]

    /// Makes (once) the ladder's media playlists and segments: for each rendition its directory and playlist.
    public static func makeLadder() throws -> [(directory: URL, playlist: URL)] {
        try ladder.enumerated().map { index, rendition in
            let playlist = try rendered(
                "ladder/v\(index)/index.m3u8", source: "testsrc2=s=\(rendition.width)x\(rendition.height):r=25:d=20",
                bitrate: rendition.bitrate, segmentSeconds: 2)
            return (playlist.deletingLastPathComponent(), playlist)
        }
    }

    /// The master playlist of the ladder (lowest rendition listed first, so players start low).
    public static func masterPlaylist(playlists: [String]) -> String {
        var text = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-INDEPENDENT-SEGMENTS\n"
        for (rendition, playlist) in zip(ladder, playlists) {
            text += "#EXT-X-STREAM-INF:BANDWIDTH=\(rendition.bitrate),RESOLUTION=\(rendition.width)x\(rendition.height)"
            text += ",CODECS=\"avc1.64001e\",FRAME-RATE=25\n\(playlist)\n"
        }
        return text
    }

    /// Serves the ladder under `prefix` and returns the master playlist's URL
    /// (`<prefix>/master.m3u8`, `<prefix>/v0/…`).
    @discardableResult
    public static func serveLadder(on server: LoopbackServer, prefix: String = "/vod") throws -> URL {
        let made = try makeLadder()
        var names: [String] = []
        for (index, rendition) in made.enumerated() {
            for file in try MediaFixtures.files(in: rendition.directory) where !file.lastPathComponent.hasPrefix(".") {
                let type = file.pathExtension == "m3u8" ? "application/vnd.apple.mpegurl" : "video/mp2t"
                server.serve(
                    "\(prefix)/v\(index)/\(file.lastPathComponent)", body: Array(try Data(contentsOf: file)),
                    contentType: type)
            }
            names.append("v\(index)/\(rendition.playlist.lastPathComponent)")
        }
        server.serve(
            "\(prefix)/master.m3u8", text: masterPlaylist(playlists: names),
            contentType: "application/vnd.apple.mpegurl")
        return server.url("\(prefix)/master.m3u8")
    }

    /// Makes (once) 90 one-second segments of a 320x180 pattern for ``SimulatedLiveStream``; returns their files in
    /// order.
    public static func makeLiveSegments() throws -> [URL] {
        let playlist = try rendered(
            "live/index.m3u8", source: "testsrc2=s=320x180:r=25:d=90", bitrate: 150_000, segmentSeconds: 1)
        let directory = playlist.deletingLastPathComponent()
        var files: [URL] = []
        for n in 0..<90 {
            let file = directory.appendingPathComponent("segment-\(n).ts")
            guard FileManager.default.fileExists(atPath: file.path) else { break }
            files.append(file)
        }
        guard files.count >= 60 else { throw FixtureError("the live segments were not made") }
        return files
    }

    /// The AES-128 key of ``makeEncrypted()`` (bytes 0 to 15).
    public static let encryptionKey = Data((0..<16).map { UInt8($0) })

    /// Makes (once) 6 s of a 256x144 pattern in 2 s MPEG-TS segments encrypted with AES-128 by the ffmpeg CLI
    /// (`#EXT-X-KEY:METHOD=AES-128,URI="key.bin",IV=0x0…0`: ffmpeg writes one explicit IV for every segment).
    /// Returns the playlist; `key.bin` lies beside it.
    public static func makeEncrypted() throws -> URL {
        let name = "aes/index.m3u8"
        let directory = try MediaFixtures.directory(for: name)
        let key = directory.appendingPathComponent("key.bin")
        try encryptionKey.write(to: key)
        let info = directory.appendingPathComponent("keyinfo.txt")
        try Data("key.bin\n\(key.path)\n".utf8).write(to: info)
        return try MediaFixtures.make(
            name,
            [
                "-f", "lavfi", "-i", "testsrc2=s=256x144:r=25:d=6", "-c:v", "libx264", "-preset", "veryfast",
                "-g", "50", "-keyint_min", "50", "-sc_threshold", "0", "-pix_fmt", "yuv420p", "-f", "hls",
                "-hls_time", "2", "-hls_playlist_type", "vod", "-hls_key_info_file", info.path,
                "-hls_segment_filename", directory.appendingPathComponent("segment-%d.ts").path,
            ])
    }

    /// Serves the encrypted stream (playlist, segments and key) under `prefix`; returns the playlist URL.
    @discardableResult
    public static func serveEncrypted(on server: LoopbackServer, prefix: String = "/aes") throws -> URL {
        let playlist = try makeEncrypted()
        for file in try MediaFixtures.files(in: playlist.deletingLastPathComponent())
        where !file.lastPathComponent.hasPrefix(".") && file.pathExtension != "txt" {
            server.serve("\(prefix)/\(file.lastPathComponent)", body: Array(try Data(contentsOf: file)))
        }
        return server.url("\(prefix)/\(playlist.lastPathComponent)")
    }

    /// Makes every stream fixture.
    public static func makeAll() throws {
        _ = try makeLadder()
        _ = try makeLiveSegments()
        _ = try makeEncrypted()
    }

    private static func rendered(_ name: String, source: String, bitrate: Int, segmentSeconds: Int) throws -> URL {
        let directory = try MediaFixtures.directory(for: name)
        let gop = 25 * segmentSeconds
        return try MediaFixtures.make(
            name,
            [
                "-f", "lavfi", "-i", source, "-c:v", "libx264", "-preset", "veryfast", "-g", "\(gop)",
                "-keyint_min", "\(gop)", "-sc_threshold", "0", "-bf", "2", "-pix_fmt", "yuv420p",
                "-b:v", "\(bitrate)", "-maxrate", "\(bitrate)", "-minrate", "\(bitrate)", "-bufsize", "\(bitrate)",
                "-x264-params", "nal-hrd=cbr", "-f", "hls", "-hls_time", "\(segmentSeconds)",
                "-hls_playlist_type", "vod", "-hls_segment_filename",
                directory.appendingPathComponent("segment-%d.ts").path,
            ])
    }
}

/// A live HLS stream simulated over prepared segments: a sliding window that gains one segment per segment
/// duration, served by a ``LoopbackServer`` at `<prefix>/live.m3u8` with segments at `<prefix>/segment-N.ts` (N
/// counts up for ever; the files repeat, with a discontinuity at each wrap).
///
/// Time is the real monotonic clock unless `now` says otherwise (a test's ``TestClock`` offset holds the window
/// still while the test works). Options: `EXT-X-PROGRAM-DATE-TIME` from `programDates` (segment N starts N seconds
/// later), an end (`EXT-X-ENDLIST` once `endAfter` segments exist), segments listed as `EXT-X-GAP` (`gaps`) and
/// segments listed but answered 404 (`unavailable`).
public final class SimulatedLiveStream: Sendable {
    /// The playlist URL.
    public let url: URL
    /// Segments in the window.
    public let windowSize: Int
    /// Seconds per segment.
    public let segmentDuration: Double
    /// The segment files, in order: segment N is file N mod their count.
    public let files: [URL]
    private let started: Double
    private let initialSegments: Int
    private let now: @Sendable () -> Double

    /// Starts the stream: `initialSegments` exist at once (the last `windowSize` of them in the window), and one
    /// more appears every segment duration.
    public init(
        server: LoopbackServer, prefix: String = "/live", windowSize: Int = 6, initialSegments: Int = 10,
        programDates: Date? = nil, endAfter: Int? = nil, gaps: Set<Int> = [], unavailable: Set<Int> = [],
        files given: [URL]? = nil, segmentDuration: Double = 1, now: (@Sendable () -> Double)? = nil
    ) throws {
        let files = try given ?? StreamFixtures.makeLiveSegments()
        self.files = files
        self.windowSize = windowSize
        self.initialSegments = max(windowSize, initialSegments)
        self.segmentDuration = segmentDuration
        let now = now ?? { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
        self.now = now
        started = now()
        url = server.url("\(prefix)/live.m3u8")
        // Segment N is file N mod count.
        let bodies = try files.map { Array(try Data(contentsOf: $0)) }
        let count = bodies.count
        let total = endAfter ?? count * 4
        let available: @Sendable () -> Int = { [started, initialSegments = self.initialSegments] in
            min(total, initialSegments + Int(((now() - started) / segmentDuration).rounded(.down)))
        }
        for n in 0..<total {
            let body = bodies[n % count]
            server.serve("\(prefix)/segment-\(n).ts", contentType: "video/mp2t") {
                n < available() && !unavailable.contains(n) && !gaps.contains(n) ? body : nil
            }
        }
        server.serve("\(prefix)/live.m3u8") { [windowSize] in
            let dates = ISO8601DateFormatter()
            dates.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let end = available()
            let first = max(0, end - windowSize)
            let target = Int(segmentDuration.rounded(.up))
            var text = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:\(target)\n#EXT-X-MEDIA-SEQUENCE:\(first)\n"
            text += "#EXT-X-DISCONTINUITY-SEQUENCE:\(first / count)\n"
            for n in first..<end {
                if n % count == 0, n > first { text += "#EXT-X-DISCONTINUITY\n" }
                if let programDates, n == first || n % count == 0 {
                    let date = programDates.addingTimeInterval(Double(n) * segmentDuration)
                    text += "#EXT-X-PROGRAM-DATE-TIME:\(dates.string(from: date))\n"
                }
                if gaps.contains(n) { text += "#EXT-X-GAP\n" }
                text += "#EXTINF:\(String(format: "%.3f", segmentDuration)),\nsegment-\(n).ts\n"
            }
            if end >= total { text += "#EXT-X-ENDLIST\n" }
            return Array(text.utf8)
        }
    }

    /// Media sequence number of the newest segment now.
    public var newestSegment: Int { initialSegments + Int(((now() - started) / segmentDuration).rounded(.down)) - 1 }

    /// When segment `n` appeared at the origin, on the stream's clock (`now`).
    public func availableSince(_ n: Int) -> Double {
        started + Double(max(0, n - initialSegments + 1)) * segmentDuration
    }
}
