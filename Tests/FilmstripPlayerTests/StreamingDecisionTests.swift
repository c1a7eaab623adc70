import FilmstripFormats
import FilmstripLoading
import FilmstripTesting
import Foundation
import Testing

@testable import FilmstripPlayer

/// A segment reference for the scheduler's tests.
private func segment(
    _ number: Int, start: Double, duration: Double = 2, discontinuity: Int = 0, initialization: String? = nil
) -> SegmentReference {
    let base = URL(string: "https://example.com/")!
    return SegmentReference(
        start: start, duration: duration, reference: "s\(number).ts", baseURL: base,
        initialization: initialization.map { InitializationSection(url: base.appendingPathComponent($0)) },
        discontinuitySequence: discontinuity, number: number)
}

@Suite("Streaming decisions")
struct SegmentSchedulerTests {
    let segments = (0..<5).map { segment($0, start: Double($0) * 2) }

    @Test("fetches in order from the segment holding the seek target, one run until something breaks it")
    func order() {
        var scheduler = SegmentScheduler(maxBuffer: 30)
        #expect(scheduler.seek(to: 5, in: segments) == 4)
        #expect(
            scheduler.next(playhead: 5, segments: segments, rendition: "a", isLive: false)
                == .fetch(segments[2], newRun: true))
        scheduler.fetched(segments[2], rendition: "a")
        #expect(
            scheduler.next(playhead: 5, segments: segments, rendition: "a", isLive: false)
                == .fetch(segments[3], newRun: false))
        // Another rendition continues at the same place, in a new run.
        let other = (0..<5).map { segment($0, start: Double($0) * 2, initialization: "b.mp4") }
        #expect(
            scheduler.next(playhead: 5, segments: other, rendition: "b", isLive: false)
                == .fetch(other[3], newRun: true))
        scheduler.fetched(other[3], rendition: "b")
        scheduler.fetched(other[4], rendition: "b")
        #expect(scheduler.next(playhead: 5, segments: other, rendition: "b", isLive: false) == .finished)
        #expect(scheduler.next(playhead: 5, segments: other, rendition: "b", isLive: true) == .waitForSegments)
    }

    @Test("a discontinuity, a number gap or a skipped segment starts a new run")
    func runs() {
        var scheduler = SegmentScheduler(maxBuffer: 30)
        let spliced = [
            segment(0, start: 0), segment(1, start: 2, discontinuity: 1), segment(3, start: 4, discontinuity: 1),
        ]
        scheduler.seek(to: 0, in: spliced)
        scheduler.fetched(spliced[0], rendition: "a")
        #expect(
            scheduler.next(playhead: 0, segments: spliced, rendition: "a", isLive: false)
                == .fetch(spliced[1], newRun: true))
        scheduler.fetched(spliced[1], rendition: "a")
        #expect(
            scheduler.next(playhead: 0, segments: spliced, rendition: "a", isLive: false)
                == .fetch(spliced[2], newRun: true))
        scheduler.seek(to: 0, in: segments)
        scheduler.fetched(segments[0], rendition: "a")
        scheduler.skipped(segments[1])
        #expect(
            scheduler.next(playhead: 0, segments: segments, rendition: "a", isLive: false)
                == .fetch(segments[2], newRun: true))
    }

    @Test("a segment that still fails abandons the switch it began, fails the stream, or is skipped")
    func failures() {
        var scheduler = SegmentScheduler(maxBuffer: 30)
        scheduler.seek(to: 0, in: segments)
        scheduler.fetched(segments[0], rendition: "a")
        // A switch's first segment: the switch is abandoned, and the same segment comes next (nothing skipped).
        #expect(scheduler.failed(segments[1], switching: true, unreachable: true, policy: .skip) == .abandonSwitch)
        #expect(
            scheduler.next(playhead: 0, segments: segments, rendition: "a", isLive: false)
                == .fetch(segments[1], newRun: false))
        // An unreachable server, or the fail policy: the stream fails, and the scheduler does not move.
        #expect(scheduler.failed(segments[1], switching: false, unreachable: true, policy: .skip) == .fail)
        #expect(scheduler.failed(segments[1], switching: false, unreachable: false, policy: .fail) == .fail)
        #expect(scheduler.bufferEnd == segments[0].end)
        // Otherwise it is skipped: the next segment starts a new run.
        #expect(scheduler.failed(segments[1], switching: false, unreachable: false, policy: .skip) == .skip)
        #expect(
            scheduler.next(playhead: 0, segments: segments, rendition: "a", isLive: false)
                == .fetch(segments[2], newRun: true))
    }

    @Test("the forward buffer holds at most maxBuffer seconds ahead of the playhead")
    func bufferBound() {
        var scheduler = SegmentScheduler(maxBuffer: 4)
        scheduler.seek(to: 0, in: segments)
        scheduler.fetched(segments[0], rendition: "a")
        scheduler.fetched(segments[1], rendition: "a")
        #expect(scheduler.next(playhead: 0, segments: segments, rendition: "a", isLive: false) == .waitForRoom)
        #expect(
            scheduler.next(playhead: 0.5, segments: segments, rendition: "a", isLive: false)
                == .fetch(segments[2], newRun: false))
    }

    @Test("retries: the player's policy is 0.25 s doubling to 4 s, then given up; an unreachable server is waited for")
    func retries() {
        var streaming = StreamingConfiguration()
        streaming.segmentRetries = 3
        var schedule = RetrySchedule(SessionRequests.retryPolicy(streaming, waitsForConnectivity: false, budget: 10))
        #expect(schedule.failed(.other) == .retry(after: .milliseconds(250)))
        #expect(schedule.failed(.connectivity) == .retry(after: .milliseconds(500)))
        #expect(schedule.failed(.other) == .retry(after: .seconds(1)))
        #expect(schedule.failed(.other) == .giveUp)
        streaming.segmentRetries = 12
        var long = RetrySchedule(SessionRequests.retryPolicy(streaming, waitsForConnectivity: false, budget: 10))
        var pauses: [Duration] = []
        while case .retry(let pause) = long.failed(.other) { pauses.append(pause) }
        #expect(pauses.count == 12 && pauses.max() == .seconds(4))

        streaming.segmentRetries = 0
        var waiting = RetrySchedule(SessionRequests.retryPolicy(streaming, waitsForConnectivity: true, budget: 5))
        var waited = Duration.zero
        var count = 0
        while case .retry(let pause) = waiting.failed(.connectivity) {
            #expect(pause <= .seconds(2))
            waited += pause
            count += 1
        }
        #expect(waited == .seconds(5) && count > 3, "waited \(waited) in \(count) pauses")
        #expect(waiting.failed(.other) == .giveUp, "other failures still count against the retries")
    }

    @Test("the loaders' default policy: 3 attempts, 0.2 s doubling with ±20 % jitter, at most 4 s; Retry-After wins")
    func loaderPolicy() {
        var schedule = RetrySchedule(RetryPolicy())
        guard case .retry(let first) = schedule.failed(.other), case .retry(let second) = schedule.failed(.other) else {
            Issue.record("the default policy makes three attempts")
            return
        }
        #expect(first >= .milliseconds(160) && first <= .milliseconds(240))
        #expect(second >= .milliseconds(320) && second <= .milliseconds(480))
        #expect(schedule.failed(.other) == .giveUp)
        // Without waiting for connectivity, an unreachable server is an ordinary failed attempt.
        var asked = RetrySchedule(RetryPolicy(maximumAttempts: 2))
        #expect(asked.failed(.connectivity, retryAfter: 30) == .retry(after: .seconds(4)))
        #expect(asked.failed(.connectivity) == .giveUp)
    }
}

/// A ``StreamSession`` on a ``TestClock`` over the loopback server: nothing happens until the clock says so.
@Suite("Stream session on a test clock", .serialized)
struct StreamSessionClockTests {
    static func playlist(first: Int, count: Int) -> String {
        var text = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:\(first)\n"
        for n in first..<(first + count) { text += "#EXTINF:2.0,\nseg\(n).ts\n" }
        return text
    }

    /// A session for `url` on `clock`, opened and started at `start` (on a thread: opening blocks).
    static func started(
        _ url: URL, clock: TestClock, retries: Int = 3, start: Double = 0
    ) async throws -> StreamSession {
        var streaming = StreamingConfiguration()
        streaming.segmentRetries = retries
        let session = StreamSession(
            url: url, transport: URLSessionDataLoader(), loading: LoadingConfiguration(),
            settings: .init(
                streaming: streaming, maxBuffer: 30, keyTimeout: nil,
                retry: SessionRequests.retryPolicy(streaming, waitsForConnectivity: false, budget: 10)),
            cmcd: nil, clock: SessionClock(clock), report: { _ in })
        let opened: Result<StreamOpening, PlayerError> = await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: Result { () throws(PlayerError) in try session.open() }) }.start()
        }
        _ = try opened.get()
        session.start(at: start)
        return session
    }

    @Test("live reloads per RFC 8216: one target duration after a change, half of one when unchanged")
    func reloadCadence() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        for n in 0..<10 { server.serve("/live/seg\(n).ts", body: Array(repeating: UInt8(n), count: 1000)) }
        server.serve("/live/index.m3u8", text: Self.playlist(first: 0, count: 3))
        let clock = TestClock()
        let session = try await Self.started(server.url("/live/index.m3u8"), clock: clock)
        defer { session.stop() }
        let reloads = { server.requestCount("/live/index.m3u8") }
        #expect(await eventually { server.requestCount("/live/seg2.ts") == 1 })
        #expect(await clock.waitForSleepers(1))
        await clock.advance(by: .milliseconds(1900))
        #expect(reloads() == 1, "nothing before one target duration")
        await clock.advance(by: .milliseconds(100))
        #expect(await eventually { reloads() == 2 })
        // Unchanged: again after half a target duration.
        #expect(await clock.waitForSleepers(1))
        await clock.advance(by: .milliseconds(900))
        #expect(reloads() == 2)
        server.serve("/live/index.m3u8", text: Self.playlist(first: 1, count: 3))
        await clock.advance(by: .milliseconds(100))
        #expect(await eventually { reloads() == 3 && server.requestCount("/live/seg3.ts") == 1 })
        // Changed: again after a whole target duration.
        #expect(await clock.waitForSleepers(1))
        await clock.advance(by: .milliseconds(1900))
        #expect(reloads() == 3)
        await clock.advance(by: .milliseconds(100))
        #expect(await eventually { reloads() == 4 })
        #expect(session.window?.range == 2...8, "segment 1 keeps its place (2 s) as the window slides")
    }

    @Test("a failed segment is tried again after 0.25 s, then 0.5 s, on the session's clock")
    func backoff() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        for n in 0..<3 { server.serve("/vod/seg\(n).ts", body: Array(repeating: UInt8(n), count: 1000)) }
        server.serve("/vod/index.m3u8", text: Self.playlist(first: 0, count: 3) + "#EXT-X-ENDLIST\n")
        server.fail("/vod/seg1.ts", with: [.status(503), .status(503)])
        let clock = TestClock()
        let session = try await Self.started(server.url("/vod/index.m3u8"), clock: clock)
        defer { session.stop() }
        let tries = { server.requestCount("/vod/seg1.ts") }
        #expect(await eventually { tries() == 1 })
        #expect(await clock.waitForSleepers(1))
        await clock.advance(by: .milliseconds(240))
        #expect(tries() == 1)
        await clock.advance(by: .milliseconds(10))
        #expect(await eventually { tries() == 2 })
        #expect(await clock.waitForSleepers(1))
        await clock.advance(by: .milliseconds(490))
        #expect(tries() == 2)
        await clock.advance(by: .milliseconds(10))
        #expect(await eventually { tries() == 3 && server.requestCount("/vod/seg2.ts") == 1 })
        #expect(await eventually { session.buffered(from: 0).complete })
    }
}

/// A one-period presentation of `tracks`.
private func presentation(_ tracks: [Presentation.Track]) -> Presentation {
    Presentation(
        streamingProtocol: .dash, url: URL(string: "https://example.com/m.mpd")!, isLive: false, duration: 10,
        periods: [Presentation.Period(id: nil, start: 0, duration: 10, tracks: tracks)])
}

private func rendition(_ id: String, _ bandwidth: Int, codecs: String? = nil) -> Presentation.Rendition {
    Presentation.Rendition(id: id, bandwidth: bandwidth, codecs: codecs, segments: .list([]))
}

@Suite("Rendition ladder: video, else audio")
struct RenditionLadderTests {
    @Test("a master's audio-only variant is left out of the video ladder; variants without codecs stay in it")
    func audioVariantLeftOut() throws {
        let ladder = try RenditionLadder(
            presentation([
                Presentation.Track(
                    id: nil, kind: .video,
                    renditions: [
                        rendition("audio", 64_000, codecs: "mp4a.40.2"),
                        rendition("hd", 3_000_000, codecs: "avc1.64001f,mp4a.40.2"),
                        rendition("plain", 800_000),
                    ])
            ]))
        #expect(!ladder.isAudioOnly)
        #expect(ladder.levels.map { $0[0].id } == ["plain", "hd"])
    }

    @Test("variants that are all audio make an audio ladder, lowest first")
    func audioMaster() throws {
        let ladder = try RenditionLadder(
            presentation([
                Presentation.Track(
                    id: nil, kind: .video,
                    renditions: [
                        rendition("hi", 128_000, codecs: "mp4a.40.2"), rendition("lo", 64_000, codecs: "mp4a.40.5"),
                    ])
            ]))
        #expect(ladder.isAudioOnly && ladder.levels.map { $0[0].id } == ["lo", "hi"])
    }

    @Test("no video track: the audio track the preferred language picks, else the default one")
    func audioTracks() throws {
        let tracks = [
            Presentation.Track(
                id: "en", kind: .audio, language: "en", isDefault: true, renditions: [rendition("en", 1)]),
            Presentation.Track(id: "fr", kind: .audio, language: "fr", renditions: [rendition("fr", 1)]),
            Presentation.Track(id: "img", kind: .image, renditions: [rendition("img", 1)]),
        ]
        #expect(try RenditionLadder(presentation(tracks)).levels.map { $0[0].id } == ["en"])
        let french = try RenditionLadder(presentation(tracks), preferredAudioLanguage: "fra")
        #expect(french.isAudioOnly && french.levels.map { $0[0].id } == ["fr"])
        #expect(throws: PlayerError.self) {
            try RenditionLadder(
                presentation([Presentation.Track(id: nil, kind: .text, renditions: [rendition("t", 1)])]))
        }
    }
}

@Suite("Segment queue: a run read again from its start")
struct SegmentQueueRewindTests {
    private func segment(_ number: Int) -> SegmentReference {
        SegmentReference(
            start: Double(number) * 2, duration: 2, reference: "s\(number).ts",
            baseURL: URL(string: "https://example.com/")!, number: number)
    }

    private func read(_ queue: SegmentQueue, run: Int, count: Int) throws -> [UInt8] {
        var out: [UInt8] = []
        while out.count < count {
            var buffer = [UInt8](repeating: 0, count: min(3, count - out.count))
            let got = try buffer.withUnsafeMutableBytes { try queue.read(run: run, into: $0) }
            if got == 0 { break }
            out += buffer.prefix(got)
        }
        return out
    }

    @Test("what was read while kept (whole chunks and part of one) is read again, then the rest; the next run follows")
    func rewind() throws {
        let queue = SegmentQueue(activity: nil)
        queue.append(Data([1, 2, 3, 4]), newRun: true, segment: segment(0))
        queue.append(Data([5, 6, 7, 8]), newRun: false, segment: segment(1))
        queue.append(Data([9]), newRun: true, segment: segment(2))
        queue.markComplete()
        guard case .run(let id, _, _, _) = queue.nextRun() else {
            Issue.record("no run")
            return
        }
        queue.keep(run: id)
        #expect(try read(queue, run: id, count: 6) == [1, 2, 3, 4, 5, 6])
        queue.rewind(run: id)
        #expect(try read(queue, run: id, count: 100) == [1, 2, 3, 4, 5, 6, 7, 8])
        // Rewinding stops keeping: a second rewind changes nothing.
        queue.rewind(run: id)
        #expect(try read(queue, run: id, count: 100) == [])
        queue.finish(run: id)
        guard case .run(let next, _, _, _) = queue.nextRun() else {
            Issue.record("no second run")
            return
        }
        #expect(try read(queue, run: next, count: 100) == [9])
    }

    @Test("a seek's reset: the old run reads nothing more, and the new position's run waits for the reader's resume")
    func seekReset() throws {
        let queue = SegmentQueue(activity: nil)
        queue.append(Data([1, 2, 3, 4]), newRun: true, segment: segment(0))
        guard case .run(let old, _, _, _) = queue.nextRun() else {
            Issue.record("no run")
            return
        }
        #expect(try read(queue, run: old, count: 2) == [1, 2])
        // The engine restarts the fetch at the target, and the fetcher queues the new position's first bytes before
        // the decoder thread has closed the old run's decoder.
        queue.reset(interrupting: true)
        queue.append(Data([9, 8]), newRun: true, segment: segment(7))
        queue.markComplete()
        #expect(throws: SegmentQueue.Interrupted.self) { try read(queue, run: old, count: 2) }
        guard case .interrupted = queue.nextRun() else {
            Issue.record("the next run was handed out before the seek was carried out")
            return
        }
        // The decoder thread carries the seek out: the new run comes next, whole.
        queue.finish(run: old)
        queue.resume()
        guard case .run(let next, _, _, _) = queue.nextRun() else {
            Issue.record("no run after the seek")
            return
        }
        #expect(next != old)
        #expect(try read(queue, run: next, count: 100) == [9, 8])
    }
}
