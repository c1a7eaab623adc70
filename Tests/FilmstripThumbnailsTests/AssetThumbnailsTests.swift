import Filmstrip
import FilmstripSync
import FilmstripTesting
import Foundation
import Testing

final class RecordingDelegate: ThumbnailsDelegate {
    enum Event: Equatable {
        case prepared
        case failed(ThumbnailsError.Kind)
    }

    /// Events and the waiting continuation live under one lock, so an event cannot slip in between the check and
    /// the registration of a waiter.
    private struct State {
        var events: [Event] = []
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())

    var recorded: [Event] { state.withLock { $0.events } }

    func prepared() { record(.prepared) }
    func failed(error: ThumbnailsError, message: String) {
        #expect(!message.isEmpty)
        record(.failed(error.kind))
    }

    private func record(_ event: Event) {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.events.append(event)
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    /// Returns once at least one event has been recorded.
    func next() async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { s -> Bool in
                if !s.events.isEmpty { return true }
                s.waiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }
}

@Suite("Delegate-style adapter")
struct AssetThumbnailsTests {
    @Test("prepared(), then thumbnails() hands over sorted start times and images once")
    func prepared() async throws {
        let fixture = try SpriteServer(count: 200, columns: 10, rows: 10)
        defer { fixture.cache.remove() }
        let adapter = AssetThumbnails(configuration: fixture.configuration())
        #expect(adapter.thumbnails() == nil)
        let delegate = RecordingDelegate()
        adapter.prepareThumbnails(delegate: delegate, url: fixture.trackURL)
        await delegate.next()
        #expect(delegate.recorded == [.prepared])
        let prepared = try #require(adapter.thumbnails())
        #expect(prepared.startTimes.count == 200)  // no 150-thumbnail cap
        #expect(prepared.startTimes == prepared.startTimes.sorted())
        #expect(prepared.startTimes[3] == 3000)
        let image = try #require(prepared.thumbnailDictionary[3000])
        #expect(
            try cellShown(
                by: Thumbnail(
                    imageData: image, format: .jpeg, timeStampStart: 3, timeStampEnd: 4, sourceURL: fixture.trackURL,
                    region: nil, width: 32, height: 18)) == 3)
        #expect(prepared.thumbnailDictionary[3001] == nil)
        #expect(adapter.thumbnails() == nil)  // handed over once
        adapter.reset()
        #expect(prepared.thumbnailDictionary[3000] == nil)
    }

    @Test("failed(error:message:) on a missing track")
    func failed() async throws {
        let fixture = try SpriteServer()
        defer { fixture.cache.remove() }
        let adapter = AssetThumbnails(configuration: fixture.configuration())
        let delegate = RecordingDelegate()
        adapter.prepareThumbnails(delegate: delegate, url: fixture.server.url("/missing.vtt"))
        await delegate.next()
        #expect(delegate.recorded == [.failed(.network)])
    }

    @Test("reset() during preparation stops it: no callback arrives, even once the delayed image has arrived")
    func resetDuringPreparation() async throws {
        let fixture = try SpriteServer()
        defer { fixture.cache.remove() }
        // Sheet 2 answers after a second: long enough to reset while the load waits for it, short enough that a load
        // that was not stopped would finish (and call prepared()) within the test.
        fixture.server.fail(fixture.sheetPath(2), with: [.delay(1)])
        let adapter = AssetThumbnails(configuration: fixture.configuration())
        let delegate = RecordingDelegate()
        adapter.prepareThumbnails(delegate: delegate, url: fixture.trackURL)
        _ = await eventually { fixture.server.requestCount(fixture.sheetPath(2)) > 0 }
        #expect(fixture.server.requestCount(fixture.sheetPath(2)) == 1)
        adapter.reset()
        // Once the stopped preparation (and anything it started) is over, no callback can come any more.
        // (A preparation that went on would wait for the delayed sheet and call prepared() before it ended.)
        await adapter.settled()
        #expect(delegate.recorded.isEmpty)
        #expect(adapter.thumbnails() == nil)
    }
}

@Suite("SDK entry point")
struct SDKTests {
    @Test("Filmstrip.shared hands out track engines that share a loader per cache directory")
    func shared() async throws {
        let fixture = try SpriteServer()
        defer { fixture.cache.remove() }
        let sdk = Filmstrip()
        let a = sdk.thumbnails(configuration: fixture.configuration())
        let b = sdk.thumbnails(engine: .tracks, configuration: fixture.configuration())
        #expect(a.loader === b.loader)
        try await a.load(webVTTTrack: fixture.trackURL)
        try await b.load(webVTTTrack: fixture.trackURL)
        #expect(fixture.server.requestCount(fixture.sheetPath(1)) == 1)
        #expect(b.getThumbnail(atTimestamp: 10)?.timeStampStart == 10)
    }
}
