import FilmstripSync
public import Foundation

/// Receives the outcome of ``AssetThumbnails/prepareThumbnails(delegate:url:)``.
///
/// Callbacks arrive on a background task; hop to the main actor yourself before touching UI.
public protocol ThumbnailsDelegate: AnyObject, Sendable {
    /// The track is parsed and its images are local: call ``AssetThumbnails/thumbnails()``.
    func prepared()
    /// Preparing failed.
    func failed(error: ThumbnailsError, message: String)
}

/// The thumbnails of a prepared track, handed over once by ``AssetThumbnails/thumbnails()``.
public struct PreparedThumbnails: Sendable {
    /// Cue start times in milliseconds, sorted ascending.
    public let startTimes: [Int32]
    /// The image of each cue, keyed by its start time in milliseconds.
    public let thumbnailDictionary: ThumbnailImageMap
}

/// The images of a prepared track by start time. Images are cropped on demand and kept in byte-bounded caches, so
/// a three-hour track costs no more memory than a short one.
public struct ThumbnailImageMap: Sendable {
    let engine: TrackThumbnails
    let generation: Int
    let startTimes: Set<Int32>

    /// Number of thumbnails.
    public var count: Int { startTimes.count }

    /// The encoded image of the cue starting at `milliseconds`, or `nil` if no cue starts there or after
    /// ``AssetThumbnails/reset()``.
    public subscript(milliseconds: Int32) -> Data? {
        guard startTimes.contains(milliseconds), engine.sourceGeneration == generation else { return nil }
        return engine.getThumbnail(atTimestamp: Double(milliseconds) / 1000)?.imageData
    }
}

/// A delegate-style front end for apps built around callbacks:
///
/// ```swift
/// let downloader = AssetThumbnails()
/// downloader.prepareThumbnails(delegate: self, url: thumbnailTrackURL)
/// // in prepared():
/// let prepared = downloader.thumbnails()!
/// let nearest = prepared.startTimes.last { $0 <= Int32(seconds * 1000) }
/// // on memory pressure or teardown:
/// downloader.reset()
/// ```
///
/// Unlike SDKs that cap the number of thumbnails, memory here is bounded by bytes.
public final class AssetThumbnails: Sendable {
    private let engine: TrackThumbnails
    private struct State {
        var task: Task<Void, Never>?
        var handedOver = false
        var attempt = 0
    }
    private let state = Mutex(State())

    /// Creates an adapter over a new `.tracks` engine.
    public init(configuration: ThumbnailsConfiguration = ThumbnailsConfiguration()) {
        engine = TrackThumbnails(configuration: configuration)
    }

    /// Creates an adapter over an existing engine.
    public init(engine: TrackThumbnails) {
        self.engine = engine
    }

    /// Starts loading the track at `url`; calls `delegate.prepared()` or `delegate.failed(error:message:)` once.
    /// The delegate is held weakly.
    public func prepareThumbnails(delegate: any ThumbnailsDelegate, url: URL) {
        weak let weakDelegate = delegate
        let attempt = state.withLock { s -> Int in
            s.task?.cancel()
            s.handedOver = false
            s.attempt += 1
            return s.attempt
        }
        let task = engine.background.start { [self] in
            do {
                try await engine.load(webVTTTrack: url)
                guard isCurrent(attempt) else { return }
                weakDelegate?.prepared()
            } catch {
                guard isCurrent(attempt) else { return }
                let wrapped = ThumbnailsError.wrap(error, url: url)
                weakDelegate?.failed(error: wrapped, message: wrapped.description)
            }
        }
        state.withLock { s in
            if s.attempt == attempt { s.task = task }
        }
    }

    private func isCurrent(_ attempt: Int) -> Bool { state.withLock { $0.attempt == attempt } }

    /// Returns once no preparation is under way and the engine's own work is over.
    package func settled() async { await engine.settled() }

    /// The sorted start times and the image map, once per prepared track; `nil` before `prepared()` and on later
    /// calls.
    public func thumbnails() -> PreparedThumbnails? {
        guard let track = engine.track, let generation = engine.sourceGeneration else { return nil }
        let first = state.withLock { s -> Bool in
            defer { s.handedOver = true }
            return !s.handedOver
        }
        guard first else { return nil }
        var starts: [Int32] = []
        starts.reserveCapacity(track.cues.count)
        for cue in track.cues {
            let ms = Int32(clamping: cue.startMilliseconds)
            if starts.last != ms { starts.append(ms) }
        }
        return PreparedThumbnails(
            startTimes: starts,
            thumbnailDictionary: ThumbnailImageMap(engine: engine, generation: generation, startTimes: Set(starts)))
    }

    /// Stops fetching, unloads the track and frees memory (call on memory pressure or teardown).
    public func reset() {
        state.withLock { s in
            s.task?.cancel()
            s.task = nil
            s.attempt += 1
            s.handedOver = false
        }
        engine.reset()
    }
}
