public import FilmstripFormats
import FilmstripMedia
public import Foundation

/// Settings for ``LivePreviewTrackGenerator``: the track's look (``preview``) and how the live run follows its
/// source.
public struct LivePreviewConfiguration: Sendable {
    /// Tile size, columns and rows, image format, quality, mode, formats (``PreviewTrackConfiguration/OutputFormat``
    /// `.vtt`, `.json`, `.hls` and `.dash`), loading and transport. The interval defaults to 2 s here.
    public var preview: PreviewTrackConfiguration
    /// Seconds of track kept behind the live edge; sheets that end before it are deleted. `nil` (the default): the
    /// source's own DVR window (the longest an HLS playlist has been, a DASH `timeShiftBufferDepth`; four hours for
    /// an MPD without one, whose window is unbounded).
    public var window: Double?
    /// Seconds of media time per sheet, a whole number of intervals; `nil` (the default): `columns × rows ×
    /// interval`. A smaller span publishes sooner (lower latency) on smaller sheets.
    public var sheetSpan: Double?
    /// Start from the oldest time in the source's window instead of the sheet that holds the live edge.
    public var fromStart = false
    /// The clock the run waits on between reloads of the source. Default `ContinuousClock()`; tests pass a test clock.
    public var clock: any Clock<Duration> = ContinuousClock()
    /// The wall clock that says which segments of a live MPD exist now. Default: the system's.
    public var wallClock: @Sendable () -> Date = { Date() }

    /// The defaults, with one thumbnail every 2 s.
    public init() {
        preview = PreviewTrackConfiguration()
        preview.interval = 2
    }

    /// The longest window: 30 days.
    static let longestWindow: Double = 30 * 86_400

    /// The formats a live track can be written in.
    public static let formats: Set<PreviewTrackConfiguration.OutputFormat> = [.vtt, .json, .hls, .dash, .iframeImages]

    /// Milliseconds per tile and per sheet, checked.
    func spans() throws(MediaError) -> (interval: Int64, span: Int64, tiles: Int) {
        try preview.validate()
        let unsupported = preview.formats.subtracting(Self.formats)
        guard unsupported.isEmpty else {
            throw MediaError(
                .invalidArgument,
                "a live track is written as vtt, json, hls, dash or iframe-images (not \(unsupported.map(\.rawValue).sorted().joined(separator: ", ")))"
            )
        }
        guard !preview.formats.isEmpty else { throw MediaError(.invalidArgument, "no format to write") }
        guard preview.count == nil else {
            throw MediaError(.invalidArgument, "a live track has no duration to share out: use an interval")
        }
        guard preview.additionalWidths.isEmpty else {
            throw MediaError(.invalidArgument, "a live track is made at one width")
        }
        guard !preview.skipBlank else {
            throw MediaError(.invalidArgument, "a live track takes each tile's own keyframe: skipBlank does not apply")
        }
        guard preview.interval <= 86_400 else {
            throw MediaError(.invalidArgument, "the interval must be at most 86400 s (got \(preview.interval))")
        }
        let interval = Int64((preview.interval * 1000).rounded())
        let perSheet = preview.columns * preview.rows
        var span = interval * Int64(perSheet)
        if let sheetSpan {
            guard sheetSpan.isFinite, sheetSpan > 0, sheetSpan <= 86_400 else {
                throw MediaError(.invalidArgument, "the sheet span must be between 0 and 86400 s (got \(sheetSpan))")
            }
            span = Int64((sheetSpan * 1000).rounded())
            guard span >= interval, span % interval == 0, span / interval <= Int64(perSheet) else {
                throw MediaError(
                    .invalidArgument,
                    "the sheet span must be a whole number of intervals, at most columns × rows of them "
                        + "(\(sheetSpan) s at \(preview.interval) s, \(perSheet) tiles a sheet)")
            }
        }
        if let window {
            guard window.isFinite, window >= Double(span) / 1000, window <= Self.longestWindow else {
                throw MediaError(.invalidArgument, "the window must be at least one sheet span and at most 30 days")
            }
        }
        return (interval, span, Int(span / interval))
    }
}

/// One publication of a live preview track: what changed in its files.
public struct LivePreviewUpdate: Sendable, Hashable {
    /// The sheets published by this update, oldest first (a sheet with no picture is published as a gap).
    public var published: [LiveSheet]
    /// File names of sheets deleted because they left the window.
    public var removed: [String]
    /// The track's window now, seconds on its timeline (the first sheet's start to the last one's end).
    public var window: ClosedRange<Double>
    /// Seconds of media between the newest published tile's end and the source's live edge when it was published.
    public var lag: Double
    /// Whether the source ended: the tracks are now VOD tracks and the run is over.
    public var ended: Bool
}

/// Errors that are specific to live production.
extension MediaError {
    static func notLive(_ url: URL) -> MediaError {
        MediaError(
            .invalidArgument,
            "not a live stream: a file, a VOD playlist or a static MPD has a whole track already (plain generate makes it)",
            url: url)
    }
}
