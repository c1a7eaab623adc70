import Filmstrip
import FilmstripSync
import FilmstripTesting
import Foundation
import Testing

/// Values a test changes while a server's generated bodies read them.
final class Knob<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    var current: Value { value.withLock { $0 } }
    func set(_ new: Value) { value.withLock { $0 = new } }
}

@Suite("Live tracks")
struct LiveTrackTests {
    static func engine(clock: TestClock, wallClock: Knob<Date>? = nil) -> TrackThumbnails {
        var configuration = ThumbnailsConfiguration()
        configuration.cacheDirectory = nil
        configuration.clock = clock
        if let wallClock { configuration.wallClock = { wallClock.current } }
        return TrackThumbnails(configuration: configuration)
    }

    /// Waits for the next change, for at most about five seconds of real time.
    static func next(
        _ changes: AsyncStream<TrackChange>.Iterator
    ) async -> (TrackChange?, AsyncStream<TrackChange>.Iterator) {
        var iterator = changes
        let change = await iterator.next()
        return (change, iterator)
    }

    @Test("a live HLS image playlist reloads on its target duration; the window slides; the change stream fires")
    func hlsPlaylist() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        for s in 0..<8 { server.serve("/live/sheet-\(s).jpg", body: try TiledSheets.sheet(s)) }
        let newest = Knob(3)  // sheets 0 ..< newest exist; the playlist lists the last three
        server.serve("/live/images.m3u8", contentType: "application/vnd.apple.mpegurl") {
            let end = newest.current
            let first = max(0, end - 3)
            var text = "#EXTM3U\n#EXT-X-TARGETDURATION:12\n#EXT-X-MEDIA-SEQUENCE:\(first)\n#EXT-X-IMAGES-ONLY\n"
            for s in first..<end {
                text += "#EXT-X-TILES:RESOLUTION=32x18,LAYOUT=4x3,DURATION=1\n#EXTINF:12,\nsheet-\(s).jpg\n"
            }
            return Array(text.utf8)
        }
        let clock = TestClock()
        let thumbnails = Self.engine(clock: clock)
        var changes = thumbnails.changes().makeAsyncIterator()
        try await thumbnails.load(track: server.url("/live/images.m3u8"))
        #expect(thumbnails.isLive && thumbnails.liveWindow == 0...36)
        #expect(try await TrackFormatsTests.cell(thumbnails, at: 30) == 30)
        newest.set(5)
        #expect(await clock.waitForSleepers())
        await clock.advance(by: .seconds(12))
        let change: TrackChange?
        (change, changes) = await Self.next(changes)
        #expect(
            change?.added == 24 && change?.removed == 24 && change?.window == 24...60, "\(String(describing: change))")
        #expect(thumbnails.getThumbnail(atTimestamp: 5) == nil)
        #expect(try await thumbnails.thumbnail(at: 5) == nil)
        #expect(try await TrackFormatsTests.cell(thumbnails, at: 50) == 50)
        // Unchanged: the next reload comes after half a target duration.
        let requests = server.requestCount("/live/images.m3u8")
        #expect(await clock.waitForSleepers())
        await clock.advance(by: .seconds(12))
        #expect(await clock.waitForSleepers())
        #expect(server.requestCount("/live/images.m3u8") == requests + 1)
        await clock.advance(by: .seconds(6))
        #expect(await clock.waitForSleepers())
        #expect(server.requestCount("/live/images.m3u8") == requests + 2)
        thumbnails.reset()
    }

    @Test(
        "a dynamic MPD with thumbnail tiles: the sheets available on the wall clock, reloaded per minimumUpdatePeriod")
    func dynamicMPD() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        for s in 0..<8 { server.serve("/dl/tiles-\(s).jpg", body: try TiledSheets.sheet(s)) }
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let formatter = ISO8601DateFormatter()
        server.serve(
            "/dl/manifest.mpd",
            text: """
                <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic" availabilityStartTime="\(formatter.string(from: start))"
                     minimumUpdatePeriod="PT2S" timeShiftBufferDepth="PT36S">
                  <Period start="PT0S"><AdaptationSet contentType="image" mimeType="image/jpeg">
                    <EssentialProperty schemeIdUri="http://dashif.org/thumbnail_tile" value="4x3"/>
                    <SegmentTemplate duration="12" startNumber="0" media="tiles-$Number$.jpg"/>
                    <Representation id="t" bandwidth="1000" width="128" height="54"/>
                  </AdaptationSet></Period>
                </MPD>
                """)
        let wall = Knob(start.addingTimeInterval(30))
        let clock = TestClock()
        let thumbnails = Self.engine(clock: clock, wallClock: wall)
        var changes = thumbnails.changes().makeAsyncIterator()
        try await thumbnails.load(track: server.url("/dl/manifest.mpd"))
        #expect(thumbnails.liveWindow == 0...24)
        #expect(try await TrackFormatsTests.cell(thumbnails, at: 13) == 13)
        wall.set(start.addingTimeInterval(70))
        #expect(await clock.waitForSleepers())
        await clock.advance(by: .seconds(2))
        let change: TrackChange?
        (change, changes) = await Self.next(changes)
        #expect(change?.window == 24...60, "\(String(describing: change))")
        #expect(thumbnails.getThumbnail(atTimestamp: 13) == nil)
        #expect(try await TrackFormatsTests.cell(thumbnails, at: 59) == 59)
        #expect(server.responseStatuses.allSatisfy { $0.status != 404 })
        thumbnails.reset()
    }

    @Test("a WebVTT track loaded as live: conditional reloads, new cues merged, the window slides, 304 changes nothing")
    func sidecar() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.serve("/side/sheet-0.jpg", body: try TiledSheets.sheet(0))
        server.serve("/side/sheet-1.jpg", body: try TiledSheets.sheet(1))
        func vtt(_ range: Range<Int>) -> String {
            var text = "WEBVTT\n\n"
            for k in range {
                let sheet = k / 12
                let cell = k % 12
                text += String(format: "00:00:%02d.000 --> 00:00:%02d.000\n", k, k + 1)
                text += "sheet-\(sheet).jpg#xywh=\((cell % 4) * 32),\((cell / 4) * 18),32,18\n\n"
            }
            return text
        }
        server.serve("/side/track.vtt", text: vtt(0..<10))
        let clock = TestClock()
        let thumbnails = Self.engine(clock: clock)
        var changes = thumbnails.changes().makeAsyncIterator()
        try await thumbnails.load(liveTrack: server.url("/side/track.vtt"), refreshInterval: 5, window: 12)
        #expect(thumbnails.liveWindow == 0...10)
        #expect(try await TrackFormatsTests.cell(thumbnails, at: 2) == 2)
        server.serve("/side/track.vtt", text: vtt(8..<20))  // the publisher keeps the newest cues only
        #expect(await clock.waitForSleepers())
        await clock.advance(by: .seconds(5))
        let change: TrackChange?
        (change, changes) = await Self.next(changes)
        // Merged 0..<20, then cues ending more than 12 s before 20 s are dropped: 8..<20 stay.
        #expect(change?.cueCount == 12 && change?.window == 8...20, "\(String(describing: change))")
        #expect(thumbnails.getThumbnail(atTimestamp: 2) == nil)
        #expect(try await TrackFormatsTests.cell(thumbnails, at: 15) == 15)
        let second = server.requests.filter { $0.path == "/side/track.vtt" }.last
        #expect(second?.headers["if-none-match"] != nil)
        // Unchanged: the server answers 304, nothing changes.
        #expect(await clock.waitForSleepers())
        await clock.advance(by: .seconds(5))
        #expect(await clock.waitForSleepers())
        #expect(server.responseStatuses.last { $0.target == "/side/track.vtt" }?.status == 304)
        #expect(thumbnails.liveWindow == 8...20)
        thumbnails.reset()
    }

    @Test("the reload cadence: a target duration after a change, half of it after none, backing off after failures")
    func schedule() {
        var playlist = LiveRefreshSchedule(.playlist(targetDuration: 6))
        #expect(playlist.first == .seconds(6))
        #expect(playlist.loaded(changed: true) == .seconds(6))
        #expect(playlist.loaded(changed: false) == .seconds(3))
        #expect(playlist.failed() == .seconds(12))
        #expect(playlist.failed() == .seconds(24))
        #expect(playlist.failed() == .seconds(24))
        var manifest = LiveRefreshSchedule(.manifest(minimumUpdatePeriod: 2))
        #expect(manifest.loaded(changed: false) == .seconds(2))
    }
}
