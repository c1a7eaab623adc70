public import Foundation

/// One segment of a rendition: where its bytes are and which span of the presentation it holds.
public struct SegmentReference: Sendable, Hashable {
    /// Start on the presentation timeline, seconds.
    public var start: Double
    /// Length in seconds.
    public var duration: Double
    /// The reference as written (after template expansion), resolved against ``baseURL`` on access: a long
    /// presentation has tens of thousands of segments, and a reader needs a few.
    public var reference: String
    /// What ``reference`` is relative to.
    public var baseURL: URL
    /// The part of the resource that is the segment (`start..<end`), when it is not the whole resource.
    public var byteRange: Range<Int64>?
    /// The initialisation section that must precede the segment's bytes for a demuxer (fMP4 `moov`, or TS PAT/PMT).
    public var initialization: InitializationSection?
    /// The AES-128 key in effect (HLS), `nil` when the segment is clear.
    public var key: HLSKey?
    /// Segments with the same value share timestamps and codec parameters; a change (HLS discontinuity, DASH period
    /// boundary) means the demuxer and decoder must start afresh.
    public var discontinuitySequence: Int
    /// The segment's number: the HLS media sequence number or the DASH `$Number$`.
    public var number: Int
    /// How the segment's own timestamps map onto the presentation timeline.
    public var timing: Timing
    /// The duration the manifest gives the segment, when ``duration`` was cut short by its period's end (a DASH
    /// template's last segment); `nil` otherwise.
    public var fullDuration: Double?
    /// The date of the segment's first sample (HLS `EXT-X-PROGRAM-DATE-TIME`), when the manifest gives it.
    public var programDateTime: Date?
    /// The segment is missing (HLS `EXT-X-GAP`) and must not be loaded.
    public var isGap = false

    /// How a segment's media timestamps map onto the presentation timeline.
    public enum Timing: Sendable, Hashable {
        /// Presentation time = media time + `offset` seconds (DASH: period start − `presentationTimeOffset`).
        case mediaTime(offset: Double)
        /// The segment's earliest frame is at ``SegmentReference/start`` (HLS, whose timestamps carry no meaning
        /// across discontinuities and are offset by the packager).
        case segmentStart
    }

    /// Creates a reference.
    public init(
        start: Double, duration: Double, reference: String, baseURL: URL, byteRange: Range<Int64>? = nil,
        initialization: InitializationSection? = nil, key: HLSKey? = nil, discontinuitySequence: Int = 0,
        number: Int = 0, timing: Timing = .segmentStart
    ) {
        self.start = start
        self.duration = duration
        self.reference = reference
        self.baseURL = baseURL
        self.byteRange = byteRange
        self.initialization = initialization
        self.key = key
        self.discontinuitySequence = discontinuitySequence
        self.number = number
        self.timing = timing
    }

    /// The segment's resource.
    public var url: URL { resolveReference(reference, against: baseURL) }

    /// The end on the presentation timeline.
    public var end: Double { start + duration }
}

/// An initialisation section: a whole resource, or a byte range of one.
public struct InitializationSection: Sendable, Hashable {
    /// The resource.
    public var url: URL
    /// The part of it, `start..<end`; `nil` for all of it.
    public var byteRange: Range<Int64>?

    /// Creates a section.
    public init(url: URL, byteRange: Range<Int64>? = nil) {
        self.url = url
        self.byteRange = byteRange
    }
}

/// Where a rendition's segments are described.
public enum SegmentIndex: Sendable, Hashable {
    /// Every segment, listed (HLS media playlists, DASH `SegmentList` and `SegmentTimeline`, static `$Number$`).
    case list([SegmentReference])
    /// An HLS media playlist that has not been loaded yet.
    case mediaPlaylist(URL)
    /// DASH `SegmentBase`: the segments are listed by the `sidx` box at `indexRange` of `url`.
    case segmentBase(SegmentBaseIndex)
    /// A DASH `SegmentTemplate` whose segments depend on the time they are asked at (a live presentation).
    case template(SegmentTemplateIndex)

    /// The listed segments, when the index is a list.
    public var references: [SegmentReference]? {
        if case .list(let references) = self { return references }
        return nil
    }
}

/// A DASH `SegmentBase` rendition: one resource whose `sidx` box lists the segments.
public struct SegmentBaseIndex: Sendable, Hashable {
    /// The resource.
    public var url: URL
    /// The `sidx` box, `start..<end`.
    public var indexRange: Range<Int64>
    /// The initialisation section (`Initialization@range`, or the bytes before the index when absent).
    public var initialization: InitializationSection
    /// `timescale` of the `presentationTimeOffset`.
    public var timescale: Int64
    /// `presentationTimeOffset`, in `timescale` units.
    public var presentationTimeOffset: Int64
    /// The period's start, seconds.
    public var periodStart: Double
    /// The period's length, when known.
    public var periodDuration: Double?
    /// The period's position among the presentation's periods (the segments' discontinuity sequence).
    public var periodIndex: Int

    /// Creates an index.
    public init(
        url: URL, indexRange: Range<Int64>, initialization: InitializationSection, timescale: Int64,
        presentationTimeOffset: Int64, periodStart: Double, periodDuration: Double?, periodIndex: Int
    ) {
        self.url = url
        self.indexRange = indexRange
        self.initialization = initialization
        self.timescale = timescale
        self.presentationTimeOffset = presentationTimeOffset
        self.periodStart = periodStart
        self.periodDuration = periodDuration
        self.periodIndex = periodIndex
    }
}

/// Resolves `reference` against `base`, percent-encoding characters a URL cannot hold.
func resolveReference(_ reference: String, against base: URL) -> URL {
    if let url = URL(string: reference, relativeTo: base) { return url.absoluteURL }
    let escaped = reference.addingPercentEncoding(withAllowedCharacters: .urlFragmentAllowed) ?? reference
    return URL(string: escaped, relativeTo: base)?.absoluteURL ?? base
}
