import FilmstripFormats
import FilmstripLoading
import FilmstripStreaming
import FilmstripSync
public import Foundation
import Logging

extension TrackThumbnails {
    /// Loads a WebVTT or storyboard JSON track that grows while it is watched: it is fetched again every
    /// `refreshInterval` seconds with a conditional request (`If-None-Match` / `If-Modified-Since`), its new cues are
    /// merged, and cues that end more than `window` seconds before the newest one are dropped. Lookups outside the
    /// window find nothing; ``changes()`` reports every change. (HLS image playlists without `EXT-X-ENDLIST` and
    /// dynamic MPDs are live by themselves: ``load(track:)`` reloads them on their own cadence.)
    public func load(liveTrack url: URL, refreshInterval: Double = 5, window: Double = 3600) async throws {
        let generation = beginLoad()
        do {
            guard
                case .modified(let bytes, let etag, let lastModified) = try await loader.revalidate(
                    url, etag: nil, lastModified: nil)
            else { throw ThumbnailsError(.network, "the track answered 304 to an unconditional request", url: url) }
            var read = try await TrackReader(self).read(bytes, url: url, live: nil)
            guard read.live == nil, read.embedded == nil else {
                throw ThumbnailsError(
                    .unsupported,
                    "only WebVTT and JSON tracks load as live sidecars; playlists and MPDs are live "
                        + "by themselves (load(track:))", url: url)
            }
            read.track = read.track.windowed(keeping: window)
            let origin = LiveOrigin.sidecar(
                url: url, interval: refreshInterval, window: window, etag: etag, lastModified: lastModified)
            try await install(ThumbnailSource(track: read.track, generation: generation, live: true))
            startLiveRefresh(origin, generation: generation)
        } catch {
            throw ThumbnailsError.wrap(error, url: url)
        }
    }

    /// Changes to a live track's cues, one element per reload that changed them. The stream lasts as long as the
    /// engine.
    public func changes() -> AsyncStream<TrackChange> { liveTracking.stream() }

    /// Whether the loaded track is live (reloaded on its cadence).
    public var isLive: Bool { currentSource?.liveWindow != nil }

    /// The window of a live track: its first cue's start to its last cue's end.
    public var liveWindow: ClosedRange<Double>? { currentSource?.liveWindow }

    /// Starts (replacing any earlier one) the reload loop of a live source.
    func startLiveRefresh(_ origin: LiveOrigin, generation: Int) {
        liveTracking.start(origin, clock: configuration.clock, logger: logger) { [weak self] origin in
            guard let self, currentSource?.generation == generation else { return nil }
            return try await reload(origin, generation: generation)
        }
    }

    /// Reads a live source again and swaps the new cues in; returns what to read next time and whether it changed.
    private func reload(_ origin: LiveOrigin, generation: Int) async throws -> (LiveOrigin, Bool) {
        guard let old = currentSource, old.generation == generation, case .track(let oldTrack, _) = old.kind else {
            throw CancellationError()
        }
        var read: TrackReader.Read
        var next = origin
        switch origin {
        case .sidecar(let url, let interval, let window, let etag, let lastModified):
            switch try await loader.revalidate(url, etag: etag, lastModified: lastModified) {
            case .notModified:
                return (origin, false)
            case .modified(let bytes, let newTag, let newDate):
                read = try await TrackReader(self).read(bytes, url: url, live: nil)
                read.track = oldTrack.merging(read.track).windowed(keeping: window)
                next = .sidecar(url: url, interval: interval, window: window, etag: newTag, lastModified: newDate)
            }
        case .stream(let refresh):
            let url = refresh.url
            let bytes = try await loader.data(for: url, policy: .networkFirst)
            read = try await TrackReader(self).read(bytes, url: url, live: origin)
            if let live = read.live { next = live }
        }
        let (added, removed) = oldTrack.cueChanges(to: read.track)
        guard added > 0 || removed > 0 else { return (next, false) }
        let source = ThumbnailSource(track: read.track, generation: generation, embedded: read.embedded, live: true)
        guard replaceSource(source) else { throw CancellationError() }
        liveTracking.publish(
            TrackChange(cueCount: read.track.cues.count, added: added, removed: removed, window: source.liveWindow))
        if configuration.loadingMode == .eager {
            for sheet in source.sheets.indices where !store.isLocal(source, sheet: sheet) {
                _ = try? await store.fetch(source, sheet: sheet)
            }
        }
        return (next, true)
    }
}
