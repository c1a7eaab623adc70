import FilmstripFormats
import FilmstripLoading
import FilmstripMedia
import FilmstripStreaming
import Foundation

/// How a live source's segments are placed on the track's timeline, kept across restarts.
enum LiveTimeBase: Codable, Hashable {
    /// HLS with `EXT-X-PROGRAM-DATE-TIME`: seconds since 1970 of each segment's program date.
    case programDate
    /// HLS without program dates: media time from the first segment the run ever saw, kept by media sequence number.
    case placed(LiveSegmentPlacement)
    /// DASH: the presentation's own time (the Period's start plus media time).
    case presentation
}

/// A live HLS media playlist or dynamic MPD read again on its cadence: each read lists the segments of the chosen
/// video rendition that exist now, placed on the track's timeline.
final class LiveSource {
    /// One read of the source.
    struct Read {
        /// The segments available, oldest first, on the track's timeline.
        var segments: [SegmentReference]
        /// The source ended (`EXT-X-ENDLIST`, or the MPD turned static).
        var ended: Bool
        /// The source's DVR window, seconds.
        var window: Double
        /// When to read again.
        var next: Duration
        /// The wall-clock time of the timeline's 0, when the source says (DASH, or HLS program dates).
        var availabilityStart: Date?
        /// The start of the source's last Period (DASH), seconds.
        var periodStart: Double?
    }

    /// The window of a source that keeps everything (an MPD without `timeShiftBufferDepth`): four hours.
    static let unboundedWindow: Double = 4 * 3600

    let url: URL
    let client: StreamingClient
    private(set) var timeBase: LiveTimeBase?
    private let tileWidth: Int
    private var presentation: Presentation
    private var rendition: Presentation.Rendition?
    private var manifestRead: Date
    private var schedule: LiveRefreshSchedule?
    private var newest = Int.min
    private let wallClock: @Sendable () -> Date

    /// Reads the manifest and checks the stream is live.
    /// With `resuming` (a run that published before), a source that is no longer live is read to its end.
    init(
        url: URL, configuration: LivePreviewConfiguration, timeBase: LiveTimeBase?, resuming: Bool
    ) async throws(MediaError) {
        self.url = url
        self.timeBase = timeBase
        tileWidth = configuration.preview.width
        wallClock = configuration.wallClock
        client = StreamingClient(
            url: url, transport: configuration.preview.transport, configuration: configuration.preview.loading,
            now: configuration.wallClock)
        do {
            presentation = try await client.presentation()
        } catch {
            // A video file (or anything that is no manifest) is no live stream.
            if !ManifestDetection.isManifest(url) { throw MediaError.notLive(url) }
            throw StreamFrames.mediaError(error, url: url)
        }
        manifestRead = configuration.wallClock()
        if presentation.streamingProtocol == .dash, !presentation.isLive, !resuming { throw MediaError.notLive(url) }
    }

    /// The segments available now (the first read of an HLS playlist with `EXT-X-ENDLIST` is refused: not live).
    func read(first: Bool) async throws(MediaError) -> Read {
        do {
            return presentation.streamingProtocol == .hls ? try await readPlaylist(first: first) : try await readMPD()
        } catch let error as MediaError {
            throw error
        } catch {
            throw StreamFrames.mediaError(error, url: url)
        }
    }

    /// Another read failed: when to try again.
    func failed() -> Duration {
        if schedule == nil { schedule = LiveRefreshSchedule(.playlist(targetDuration: 2)) }
        return schedule!.failed()
    }

    private func chosenRendition() throws(MediaError) -> Presentation.Rendition {
        if let rendition { return rendition }
        let tracks = presentation.periods.last?.tracks.filter { $0.kind == .video } ?? []
        guard let track = tracks.first(where: \.isDefault) ?? tracks.first,
            let chosen = RenditionChoice.choose(
                track.renditions, maximumSize: PixelSize(width: tileWidth, height: Int(Int32.max)))
        else { throw MediaError(.noVideoStream, "the live stream has no video rendition", url: url) }
        rendition = chosen
        return chosen
    }

    private func readPlaylist(first: Bool) async throws -> Read {
        if !first, case .list = try chosenRendition().segments {
            // The source is a media playlist itself: read it again.
            presentation = try await client.refresh()
            rendition = nil
        }
        let list = try await client.segmentList(of: try chosenRendition(), in: presentation, reload: !first)
        if first, !list.isLive { throw MediaError.notLive(url) }
        var segments = list.references
        let base: LiveTimeBase
        if let timeBase {
            base = timeBase
        } else {
            base = segments.allSatisfy { $0.programDateTime != nil } ? .programDate : .placed(LiveSegmentPlacement())
        }
        switch base {
        case .programDate:
            // Segments before the first program date cannot be placed: left out.
            segments = segments.compactMap { s in
                guard let date = s.programDateTime else { return nil }
                var placed = s
                placed.start = date.timeIntervalSince1970
                return placed
            }
            timeBase = .programDate
        case .placed(var placement):
            segments = placement.place(segments)
            timeBase = .placed(placement)
        case .presentation:
            timeBase = .presentation
        }
        let changed = (segments.last?.number ?? Int.min) > newest
        newest = max(newest, segments.last?.number ?? Int.min)
        if schedule == nil {
            schedule = LiveRefreshSchedule(.playlist(targetDuration: min(3600, list.targetDuration ?? 2)))
        }
        let next = schedule!.loaded(changed: changed)
        return Read(
            segments: segments, ended: !list.isLive, window: segments.reduce(0) { $0 + $1.duration }, next: next,
            availabilityStart: base == .programDate ? Date(timeIntervalSince1970: 0) : nil)
    }

    private func readMPD() async throws -> Read {
        let period = min(3600, max(0.5, presentation.minimumUpdatePeriod ?? 2))
        if wallClock().timeIntervalSince(manifestRead) >= period {
            presentation = try await client.refresh()
            manifestRead = wallClock()
        }
        let timeline = try await client.timeline(
            of: .video, maximumSize: PixelSize(width: tileWidth, height: Int(Int32.max)))
        timeBase = .presentation
        let segments = timeline.segments
        let length = segments.last?.duration ?? 2
        schedule = LiveRefreshSchedule(.manifest(minimumUpdatePeriod: period))
        return Read(
            segments: segments, ended: !presentation.isLive,
            window: min(
                presentation.timeShiftBufferDepth ?? Self.unboundedWindow, LivePreviewConfiguration.longestWindow),
            next: .seconds(min(period, max(0.5, length))), availabilityStart: presentation.availabilityStartTime,
            periodStart: presentation.periods.last.map { min(max(0, $0.start), 1e10) })
    }
}
