public import FilmstripFormats

/// The segments of one chosen rendition per period, in presentation order: what a reader walks to find the segment
/// that holds a time.
public struct MediaTimeline: Sendable {
    /// The presentation it was made from.
    public var presentation: Presentation
    /// The rendition chosen in each period, in period order.
    public var renditions: [Presentation.Rendition]
    /// The segments, sorted by start.
    public var segments: [SegmentReference]

    /// Creates a timeline.
    public init(presentation: Presentation, renditions: [Presentation.Rendition], segments: [SegmentReference]) {
        self.presentation = presentation
        self.renditions = renditions
        self.segments = segments
    }

    /// The start of the first segment (0 for VOD; the oldest available time for live).
    public var start: Double { segments.first?.start ?? 0 }
    /// The end of the last segment.
    public var end: Double { segments.last?.end ?? 0 }

    /// The segment whose span holds `t` (a time in a gap belongs to the segment before it); `nil` outside the
    /// timeline.
    public func segmentIndex(containing t: Double) -> Int? {
        guard let first = segments.first, t >= first.start - MediaTime.tolerance, t < end + MediaTime.tolerance else {
            return nil
        }
        var low = 0
        var high = segments.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if segments[mid].start <= t + MediaTime.tolerance { low = mid } else { high = mid - 1 }
        }
        return low
    }

    /// The display size of the widest chosen rendition, when the manifest says.
    public var size: PixelSize? {
        guard let best = renditions.max(by: { $0.pixelCount < $1.pixelCount }), let w = best.width, let h = best.height
        else { return nil }
        return PixelSize(width: w, height: h)
    }
}

/// How a rendition is chosen for frames.
public enum RenditionChoice {
    /// The smallest rendition at least as large as `maximumSize` (one whose picture, fitted into that box, is not
    /// enlarged), else the largest; without a size, the largest. Unknown sizes fall back to bandwidth.
    public static func choose(
        _ renditions: [Presentation.Rendition], maximumSize: PixelSize?
    ) -> Presentation.Rendition? {
        let largest = renditions.max { ($0.pixelCount, $0.bandwidth) < ($1.pixelCount, $1.bandwidth) }
        guard let maximumSize else { return largest }
        let large = renditions.filter { r in
            guard let w = r.width, let h = r.height else { return false }
            return w >= maximumSize.width || h >= maximumSize.height
        }
        return large.min { ($0.pixelCount, $0.bandwidth) < ($1.pixelCount, $1.bandwidth) } ?? largest
    }

}

extension StreamingClient {
    /// The timeline of `kind` (video by default): in every period, the first track of that kind that has the `main`
    /// role or else the first one, and its rendition chosen by ``RenditionChoice``; for live presentations, the
    /// segments available now.
    public func timeline(
        of kind: Presentation.TrackKind = .video, maximumSize: PixelSize? = nil
    ) async throws -> MediaTimeline {
        let manifest = try await presentation()
        var renditions: [Presentation.Rendition] = []
        var segments: [SegmentReference] = []
        var loaded = manifest
        for period in manifest.periods {
            let tracks = period.tracks.filter { $0.kind == kind }
            guard let track = tracks.first(where: { $0.isDefault }) ?? tracks.first,
                let rendition = RenditionChoice.choose(track.renditions, maximumSize: maximumSize)
            else { continue }
            renditions.append(rendition)
            let references = try await self.segments(of: rendition, in: manifest)
            if case .mediaPlaylist(let playlistURL) = rendition.segments {
                // A media playlist loaded through a master tells whether the presentation is live.
                loaded.isLive = try await mediaPlaylist(playlistURL).isLive
                if !loaded.isLive { loaded.duration = references.last?.end }
            }
            segments += references
        }
        guard !renditions.isEmpty else {
            throw StreamingError(.noTrack, "the presentation has no \(kind.rawValue) track", url: url)
        }
        segments.sort { $0.start < $1.start }
        return MediaTimeline(presentation: loaded, renditions: renditions, segments: segments)
    }

}
