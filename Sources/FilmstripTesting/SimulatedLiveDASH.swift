public import Foundation

/// A live DASH presentation served by a ``LoopbackServer`` from a looping source: a dynamic MPD with a `$Number$`
/// template of 1 s fMP4 segments, whose availability follows the server's own clock. Segment `n` (from 1) is the
/// source's segment `(n − 1) mod 10`, its `tfdt` rewritten to `(n − 1)` seconds, so the presentation time of every
/// frame is real and the counter colour shows `(t mod 10)·25`.
///
/// A segment is answered only inside its availability window (from `availabilityStartTime + n` seconds, until it
/// leaves the time-shift buffer); anything else is a 404, as a strict origin answers. The server's clock may be
/// skewed from the client's; the MPD can carry a `UTCTiming` element pointing at `<prefix>/time` (http-iso), so a
/// client that reads it still asks only for what exists.
public final class SimulatedLiveDASH: Sendable {
    /// The MPD's URL.
    public let url: URL
    /// Seconds the server's clock is ahead of the real one.
    public let clockSkew: Double
    /// Seconds between the availability start and the moment the stream was created.
    public let initialAge: Double
    /// `timeShiftBufferDepth` in seconds.
    public let timeShiftBufferDepth: Double
    /// The availability start, on the server's clock.
    public let availabilityStart: Date

    /// Starts the presentation (`count` segments long) under `prefix` (`<prefix>/live.mpd`, `<prefix>/init.m4s`, `<prefix>/chunk-N.m4s`,
    /// `<prefix>/time`). `now` is the real clock the server's is skewed from (a test's ``TestClock/wallClock(from:)``
    /// holds the live window still while the test works).
    public init(
        server: LoopbackServer, prefix: String = "/dash-live", clockSkew: Double = 0, utcTiming: Bool = false,
        initialAge: Double = 60, timeShiftBufferDepth: Double = 30, segments count: Int = 600,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        let directory = try Self.makeSource()
        self.clockSkew = clockSkew
        self.initialAge = initialAge
        self.timeShiftBufferDepth = timeShiftBufferDepth
        url = server.url("\(prefix)/live.mpd")
        let start = now().addingTimeInterval(clockSkew - initialAge)
        availabilityStart = start
        let serverNow: @Sendable () -> Date = { now().addingTimeInterval(clockSkew) }
        self.serverNow = serverNow
        let segments = try (1...10).map { n in
            Array(try Data(contentsOf: directory.appendingPathComponent(String(format: "chunk-0-%05d.m4s", n))))
        }
        server.serve(
            "\(prefix)/init.m4s", body: Array(try Data(contentsOf: directory.appendingPathComponent("init-0.m4s"))),
            contentType: "video/mp4")
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let ast = formatter.string(from: start)
        let timing =
            utcTiming ? #"<UTCTiming schemeIdUri="urn:mpeg:dash:utc:http-iso:2014" value="time"/>"# : ""
        let mpd = """
            <?xml version="1.0" encoding="utf-8"?>
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-live:2011" type="dynamic" \
            availabilityStartTime="\(ast)" minimumUpdatePeriod="PT2S" timeShiftBufferDepth="PT\(Int(timeShiftBufferDepth))S" \
            suggestedPresentationDelay="PT3S" minBufferTime="PT2S">
              <Period id="live" start="PT0S">
                <AdaptationSet contentType="video" mimeType="video/mp4" segmentAlignment="true" startWithSAP="1">
                  <SegmentTemplate timescale="12800" duration="12800" startNumber="1" initialization="init.m4s" media="chunk-$Number$.m4s"/>
                  <Representation id="v" codecs="avc1.64000d" bandwidth="200000" width="320" height="240" frameRate="25"/>
                </AdaptationSet>
              </Period>
              \(timing)
            </MPD>

            """
        server.serve("\(prefix)/live.mpd", body: Array(mpd.utf8), contentType: "application/dash+xml")
        server.serve("\(prefix)/time", contentType: "text/plain") {
            let clock = ISO8601DateFormatter()
            clock.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return Array(clock.string(from: serverNow()).utf8)
        }
        for n in 1...max(1, count) {
            let body = segments[(n - 1) % segments.count]
            server.serve("\(prefix)/chunk-\(n).m4s", contentType: "video/mp4") { [timeShiftBufferDepth] in
                let age = serverNow().timeIntervalSince(start)
                // Available from the segment's end until it leaves the time-shift buffer.
                guard Double(n) <= age, Double(n) >= age - timeShiftBufferDepth else { return nil }
                return Self.retimed(body, decodeTime: UInt64(n - 1) * 12800)
            }
        }
    }

    /// The server's clock.
    private let serverNow: @Sendable () -> Date

    /// The newest segment available on the server now.
    public var newestSegment: Int { Int(serverNow().timeIntervalSince(availabilityStart)) }

    /// Makes (once) the source: the counter re-encoded with a keyframe every second, cut by the dash muxer into
    /// 1 s segments (`init-0.m4s`, `chunk-0-0000N.m4s`, timescale 12800).
    public static func makeSource() throws -> URL {
        let counter = try MediaFixtures.counter()
        let recipe = [
            "-i", counter.path, "-c:v", "libx264", "-preset", "veryfast", "-g", "25", "-keyint_min", "25",
            "-sc_threshold", "0", "-bf", "2", "-pix_fmt", "yuv420p", "-f", "dash", "-seg_duration", "1",
            "-use_timeline", "0", "-use_template", "1", "-init_seg_name", "init-$RepresentationID$.m4s",
            "-media_seg_name", "chunk-$RepresentationID$-$Number%05d$.m4s", "manifest.mpd",
        ]
        return try MediaFixtures.makeDirectory("streams/live-dash-source", recipe: [("", recipe)]) { staging in
            try MediaFixtures.run(["-hide_banner", "-loglevel", "error", "-nostdin", "-y"] + recipe, in: staging)
        }
    }

    /// `segment` with the `baseMediaDecodeTime` of its `tfdt` boxes set to `decodeTime`.
    static func retimed(_ segment: [UInt8], decodeTime: UInt64) -> [UInt8] {
        var bytes = segment
        var i = 4
        while i + 12 <= bytes.count {
            if bytes[i] == 0x74, bytes[i + 1] == 0x66, bytes[i + 2] == 0x64, bytes[i + 3] == 0x74 {  // "tfdt"
                let version = bytes[i + 4]
                let at = i + 8
                if version == 1, at + 8 <= bytes.count {
                    for k in 0..<8 { bytes[at + k] = UInt8((decodeTime >> (8 * UInt64(7 - k))) & 0xFF) }
                } else if at + 4 <= bytes.count {
                    for k in 0..<4 { bytes[at + k] = UInt8((decodeTime >> (8 * UInt64(3 - k))) & 0xFF) }
                }
                i += 12
            } else {
                i += 1
            }
        }
        return bytes
    }
}
