public import Foundation

/// One streaming presentation, HLS or DASH, as plain values: periods, tracks, renditions and the segments that hold
/// their media. Both ``HLSPlaylist`` and ``DASHManifestParser`` map into it, so everything above the parsers works
/// the same on either protocol.
///
/// Times are presentation times in seconds: for DASH, the MPD timeline (period start plus media time minus
/// `presentationTimeOffset`); for HLS, the sum of the `EXTINF` durations before a segment.
///
/// ```swift
/// let presentation = try DASHManifestParser().parse(bytes, url: mpdURL)
/// for period in presentation.periods {
///     for track in period.tracks where track.kind == .video {
///         print(period.start, track.renditions.map { ($0.width, $0.height, $0.bandwidth) })
///     }
/// }
/// ```
public struct Presentation: Sendable, Hashable {
    /// The protocol the presentation was described in.
    public enum StreamingProtocol: String, Sendable, Hashable {
        /// HTTP Live Streaming (RFC 8216).
        case hls
        /// MPEG-DASH (ISO/IEC 23009-1).
        case dash
    }

    /// The protocol.
    public var streamingProtocol: StreamingProtocol
    /// The manifest's URL (relative references resolve against it).
    public var url: URL
    /// Whether the presentation grows while it is watched: a dynamic MPD, or an HLS playlist without `EXT-X-ENDLIST`.
    public var isLive: Bool
    /// The whole duration in seconds, when known (`mediaPresentationDuration`, or the sum of the segments).
    public var duration: Double?
    /// The periods in order (HLS has one).
    public var periods: [Period]
    /// DASH `availabilityStartTime`: the wall-clock time of presentation time 0 of a live presentation.
    public var availabilityStartTime: Date?
    /// DASH `publishTime`.
    public var publishTime: Date?
    /// How often the manifest may change, in seconds: DASH `minimumUpdatePeriod`; for live HLS, the target duration.
    public var minimumUpdatePeriod: Double?
    /// DASH `timeShiftBufferDepth`: how far behind the live edge segments stay available, in seconds.
    public var timeShiftBufferDepth: Double?
    /// DASH `suggestedPresentationDelay`: how far behind the live edge to play, in seconds.
    public var suggestedPresentationDelay: Double?
    /// DASH `minBufferTime`, in seconds.
    public var minBufferTime: Double?
    /// DASH `UTCTiming` sources, in the manifest's order of preference.
    public var utcTiming: [UTCTiming]
    /// The Common Encryption the manifest declares (empty when it declares none).
    public var protection: [StreamProtection] = []

    /// Creates a presentation.
    public init(
        streamingProtocol: StreamingProtocol, url: URL, isLive: Bool, duration: Double?, periods: [Period],
        availabilityStartTime: Date? = nil, publishTime: Date? = nil, minimumUpdatePeriod: Double? = nil,
        timeShiftBufferDepth: Double? = nil, suggestedPresentationDelay: Double? = nil, minBufferTime: Double? = nil,
        utcTiming: [UTCTiming] = []
    ) {
        self.streamingProtocol = streamingProtocol
        self.url = url
        self.isLive = isLive
        self.duration = duration
        self.periods = periods
        self.availabilityStartTime = availabilityStartTime
        self.publishTime = publishTime
        self.minimumUpdatePeriod = minimumUpdatePeriod
        self.timeShiftBufferDepth = timeShiftBufferDepth
        self.suggestedPresentationDelay = suggestedPresentationDelay
        self.minBufferTime = minBufferTime
        self.utcTiming = utcTiming
    }

    /// A DASH `UTCTiming` element: where to learn the true time.
    public struct UTCTiming: Sendable, Hashable {
        /// How the value is read.
        public enum Scheme: Sendable, Hashable {
            /// `urn:mpeg:dash:utc:http-iso:2014`: GET the URL; the body is an ISO 8601 date.
            case httpISO
            /// `urn:mpeg:dash:utc:http-xsdate:2014`: GET the URL; the body is an `xs:dateTime`.
            case httpXSDate
            /// `urn:mpeg:dash:utc:http-head:2014`: HEAD the URL; the `Date` header is the time.
            case httpHead
            /// `urn:mpeg:dash:utc:direct:2014`: the value itself is an `xs:dateTime`.
            case direct
            /// Any other scheme (NTP, SNTP, …), kept by URI and not used.
            case other(String)
        }

        /// The scheme.
        public var scheme: Scheme
        /// The `value` attribute: a URL for the http schemes, a date for `direct`.
        public var value: String

        /// Creates a timing source.
        public init(scheme: Scheme, value: String) {
            self.scheme = scheme
            self.value = value
        }
    }

    /// A period: a span of the presentation with its own tracks (DASH `Period`; HLS has one).
    public struct Period: Sendable, Hashable {
        /// `id`, if given.
        public var id: String?
        /// Start on the presentation timeline, seconds.
        public var start: Double
        /// Length in seconds, when known.
        public var duration: Double?
        /// The tracks.
        public var tracks: [Track]

        /// Creates a period.
        public init(id: String?, start: Double, duration: Double?, tracks: [Track]) {
            self.id = id
            self.start = start
            self.duration = duration
            self.tracks = tracks
        }

        /// The end on the presentation timeline, when known.
        public var end: Double? { duration.map { start + $0 } }
    }

    /// What a track carries.
    public enum TrackKind: String, Sendable, Hashable {
        /// Video.
        case video
        /// Audio.
        case audio
        /// Thumbnail images (HLS image streams, DASH thumbnail tiles).
        case image
        /// Key frames only, for trick play and previews (HLS I-frame playlists, DASH trick-mode sets).
        case iFrame = "iframe"
        /// Subtitles and captions.
        case text
    }

    /// A track: the renditions of one kind of content among which a player switches (a DASH `AdaptationSet`; in
    /// HLS, the variants' video, or one language of an audio group).
    public struct Track: Sendable, Hashable {
        /// `id` (DASH) or group id (HLS), if any.
        public var id: String?
        /// The kind of content.
        public var kind: TrackKind
        /// BCP 47 language tag, if given.
        public var language: String?
        /// A human name (HLS `NAME`, DASH `Label`).
        public var name: String?
        /// DASH `Role` values (`main`, `alternate`, …).
        public var roles: [String]
        /// HLS `DEFAULT=YES`, or a DASH `main` role.
        public var isDefault: Bool
        /// HLS `AUTOSELECT=YES`.
        public var autoselect: Bool
        /// Columns and rows of thumbnail sheets (image tracks), when given on the track.
        public var tileLayout: TileLayout?
        /// The renditions.
        public var renditions: [Rendition]

        /// Creates a track.
        public init(
            id: String?, kind: TrackKind, language: String? = nil, name: String? = nil, roles: [String] = [],
            isDefault: Bool = false, autoselect: Bool = false, tileLayout: TileLayout? = nil, renditions: [Rendition]
        ) {
            self.id = id
            self.kind = kind
            self.language = language
            self.name = name
            self.roles = roles
            self.isDefault = isDefault
            self.autoselect = autoselect
            self.tileLayout = tileLayout
            self.renditions = renditions
        }
    }

    /// Columns and rows of a thumbnail sheet.
    public struct TileLayout: Sendable, Hashable {
        /// Columns.
        public var columns: Int
        /// Rows.
        public var rows: Int

        /// Creates a layout.
        public init(columns: Int, rows: Int) {
            self.columns = columns
            self.rows = rows
        }
    }

    /// One encoding of a track (a DASH `Representation`, an HLS variant or rendition).
    public struct Rendition: Sendable, Hashable {
        /// `id` (DASH), or the playlist URI (HLS).
        public var id: String
        /// Bits per second (`bandwidth`, `BANDWIDTH`); 0 when unknown.
        public var bandwidth: Int
        /// `AVERAGE-BANDWIDTH` (HLS).
        public var averageBandwidth: Int?
        /// RFC 6381 codecs.
        public var codecs: String?
        /// MIME type (DASH).
        public var mimeType: String?
        /// Width in pixels.
        public var width: Int?
        /// Height in pixels.
        public var height: Int?
        /// Frames per second.
        public var frameRate: Double?
        /// Audio channels (HLS `CHANNELS`, DASH `AudioChannelConfiguration`), as written.
        public var channels: String?
        /// Columns and rows of thumbnail sheets, when given on the rendition.
        public var tileLayout: TileLayout?
        /// Where the segments are.
        public var segments: SegmentIndex

        /// Creates a rendition.
        public init(
            id: String, bandwidth: Int, averageBandwidth: Int? = nil, codecs: String? = nil, mimeType: String? = nil,
            width: Int? = nil, height: Int? = nil, frameRate: Double? = nil, channels: String? = nil,
            tileLayout: TileLayout? = nil, segments: SegmentIndex
        ) {
            self.id = id
            self.bandwidth = bandwidth
            self.averageBandwidth = averageBandwidth
            self.codecs = codecs
            self.mimeType = mimeType
            self.width = width
            self.height = height
            self.frameRate = frameRate
            self.channels = channels
            self.tileLayout = tileLayout
            self.segments = segments
        }

        /// Width times height, 0 when either is unknown.
        public var pixelCount: Int { (width ?? 0) * (height ?? 0) }
    }

    /// The video tracks of the first period (what a caller asking for frames usually wants).
    public var videoTracks: [Track] { periods.first?.tracks.filter { $0.kind == .video } ?? [] }

    /// The period that contains presentation time `t` (the last one starting at or before it; the first when `t`
    /// precedes every period).
    public func periodIndex(containing t: Double) -> Int? {
        guard !periods.isEmpty else { return nil }
        var found = 0
        for (index, period) in periods.enumerated() where period.start <= t + 1e-9 { found = index }
        return found
    }
}
