public import Foundation

/// A parsed HLS playlist (RFC 8216): a multivariant (master) playlist or a media playlist.
public enum HLSPlaylist: Sendable, Hashable {
    /// A master playlist: variants and renditions.
    case master(HLSMasterPlaylist)
    /// A media playlist: segments.
    case media(HLSMediaPlaylist)
}

/// A master playlist.
public struct HLSMasterPlaylist: Sendable, Hashable {
    /// `EXT-X-STREAM-INF` variants, in playlist order.
    public var variants: [HLSVariant] = []
    /// `EXT-X-MEDIA` renditions.
    public var renditions: [HLSRendition] = []
    /// `EXT-X-I-FRAME-STREAM-INF` streams.
    public var iFrameStreams: [HLSIFrameStream] = []
    /// `EXT-X-IMAGE-STREAM-INF` streams (thumbnail tiles).
    public var imageStreams: [HLSIFrameStream] = []
    /// `EXT-X-INDEPENDENT-SEGMENTS`.
    public var independentSegments = false
    /// `EXT-X-VERSION` (1 when absent).
    public var version = 1
}

/// One `EXT-X-STREAM-INF` variant.
public struct HLSVariant: Sendable, Hashable {
    /// The media playlist.
    public var uri: URL
    /// `BANDWIDTH`, bits per second.
    public var bandwidth: Int
    /// `AVERAGE-BANDWIDTH`.
    public var averageBandwidth: Int?
    /// `CODECS`.
    public var codecs: String?
    /// `RESOLUTION`.
    public var resolution: PixelSize?
    /// `FRAME-RATE`.
    public var frameRate: Double?
    /// `AUDIO` group id.
    public var audio: String?
    /// `VIDEO` group id.
    public var video: String?
    /// `SUBTITLES` group id.
    public var subtitles: String?
}

/// One `EXT-X-MEDIA` rendition.
public struct HLSRendition: Sendable, Hashable {
    /// `TYPE`: AUDIO, VIDEO, SUBTITLES or CLOSED-CAPTIONS.
    public var type: String
    /// `GROUP-ID`.
    public var groupID: String
    /// `NAME`.
    public var name: String
    /// `LANGUAGE`.
    public var language: String?
    /// `DEFAULT=YES`.
    public var isDefault: Bool
    /// `AUTOSELECT=YES`.
    public var autoselect: Bool
    /// `URI`, when the rendition has its own playlist.
    public var uri: URL?
    /// `CHANNELS`, as written (audio).
    public var channels: String?

    /// Creates a rendition.
    public init(
        type: String, groupID: String, name: String, language: String?, isDefault: Bool, autoselect: Bool, uri: URL?,
        channels: String? = nil
    ) {
        self.channels = channels
        self.type = type
        self.groupID = groupID
        self.name = name
        self.language = language
        self.isDefault = isDefault
        self.autoselect = autoselect
        self.uri = uri
    }
}

/// An `EXT-X-I-FRAME-STREAM-INF` or `EXT-X-IMAGE-STREAM-INF` stream.
public struct HLSIFrameStream: Sendable, Hashable {
    /// The playlist.
    public var uri: URL
    /// `BANDWIDTH`.
    public var bandwidth: Int
    /// `CODECS`.
    public var codecs: String?
    /// `RESOLUTION` (for image streams: one tile).
    public var resolution: PixelSize?

    /// Whether the stream is an I-frame image sequence (`CODECS="mjpg"`): JPEG images, not video.
    public var isImageSequence: Bool {
        codecs?.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).lowercased() == "mjpg" }
            == true
    }
}

/// A media playlist.
public struct HLSMediaPlaylist: Sendable, Hashable {
    /// `EXT-X-TARGETDURATION`, seconds.
    public var targetDuration: Double = 0
    /// `EXT-X-MEDIA-SEQUENCE` of the first segment.
    public var mediaSequence = 0
    /// `EXT-X-DISCONTINUITY-SEQUENCE` of the first segment.
    public var discontinuitySequence = 0
    /// `EXT-X-PLAYLIST-TYPE`: `VOD` or `EVENT`, if given.
    public var playlistType: String?
    /// `EXT-X-ENDLIST`: no more segments will be added.
    public var endList = false
    /// `EXT-X-I-FRAMES-ONLY`.
    public var iFramesOnly = false
    /// `EXT-X-IMAGES-ONLY`.
    public var imagesOnly = false
    /// `EXT-X-VERSION` (1 when absent).
    public var version = 1
    /// The segments, in order.
    public var segments: [HLSSegment] = []
    /// Common Encryption of the samples (`EXT-X-KEY` with `METHOD=SAMPLE-AES` or `SAMPLE-AES-CTR` over fMP4 segments),
    /// as the last such key declares it; the segments are fetched as they are and their samples decrypted.
    public var sampleEncryption: StreamProtection?

    /// Whether more segments may appear: no `EXT-X-ENDLIST` and not `EXT-X-PLAYLIST-TYPE:VOD` (a VOD playlist
    /// cannot change, RFC 8216 4.3.3.5).
    public var isLive: Bool { !endList && playlistType != "VOD" }
    /// Whether `EXT-X-TARGETDURATION` was missing (RFC 8216 requires it; ``targetDuration`` is then the longest
    /// `EXTINF` rounded up, as lenient players read it).
    public var targetDurationMissing = false
    /// Sum of the segment durations, seconds.
    public var duration: Double { segments.reduce(0) { $0 + $1.duration } }
}

/// One media segment.
public struct HLSSegment: Sendable, Hashable {
    /// The URI as written in the playlist.
    public var reference: String
    /// The playlist's URL, which ``reference`` is relative to.
    public var baseURL: URL
    /// The segment's resource (with the byte range, the part of it), resolved against the playlist URL when asked:
    /// a 12-hour playlist has tens of thousands of segments and a player needs the next few.
    public var uri: URL { resolveReference(reference, against: baseURL) }
    /// `EXTINF` duration, seconds.
    public var duration: Double
    /// `EXTINF` title.
    public var title: String?
    /// The media sequence number.
    public var sequenceNumber: Int
    /// The discontinuity sequence number.
    public var discontinuitySequence: Int
    /// `EXT-X-DISCONTINUITY` precedes this segment.
    public var discontinuity: Bool
    /// `EXT-X-BYTERANGE`, resolved to absolute offsets (`start..<end`), implicit offsets included.
    public var byteRange: Range<Int64>?
    /// The initialisation section (`EXT-X-MAP`) in effect.
    public var map: HLSMap?
    /// The key (`EXT-X-KEY`) in effect; `nil` when clear.
    public var key: HLSKey?
    /// The date of the segment's first sample (`EXT-X-PROGRAM-DATE-TIME`, carried forward by durations).
    public var programDateTime: Date?
    /// `EXT-X-TILES` for image segments.
    public var tiles: HLSTiles?
    /// `EXT-X-GAP`: the segment is missing and must not be loaded.
    public var gap = false
}

/// `EXT-X-MAP`.
public struct HLSMap: Sendable, Hashable {
    /// The initialisation section.
    public var uri: URL
    /// Its byte range, if given.
    public var byteRange: Range<Int64>?

    /// Creates a map.
    public init(uri: URL, byteRange: Range<Int64>?) {
        self.uri = uri
        self.byteRange = byteRange
    }
}

/// `EXT-X-KEY` with a supported method.
public struct HLSKey: Sendable, Hashable {
    /// `AES-128`: the whole segment is encrypted with AES-128-CBC.
    public var method: String
    /// The key's URI.
    public var uri: URL
    /// `IV` (16 bytes); `nil` means the media sequence number is the IV.
    public var iv: [UInt8]?
}

/// `EXT-X-TILES`: a segment that is a sheet of thumbnails.
public struct HLSTiles: Sendable, Hashable {
    /// One tile.
    public var resolution: PixelSize
    /// Columns and rows.
    public var columns: Int
    /// Rows.
    public var rows: Int
    /// Time each tile covers, seconds (when given).
    public var duration: Double?

    /// Creates a tiles description.
    public init(resolution: PixelSize, columns: Int, rows: Int, duration: Double?) {
        self.resolution = resolution
        self.columns = columns
        self.rows = rows
        self.duration = duration
    }
}

/// Why a playlist could not be parsed: the 1-based line, a message and the offending line.
public struct HLSParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem.
    public enum Kind: String, Sendable, Hashable {
        /// Not an HLS playlist (no `#EXTM3U`).
        case notAPlaylist
        /// A malformed tag, attribute or value.
        case malformed
        /// A required tag or attribute is missing.
        case missing
        /// A feature Filmstrip does not handle (such as `SAMPLE-AES` keys).
        case unsupported
        /// More entries than ``HLSPlaylistParser/maximumEntries``.
        case tooLarge
    }

    /// What kind of problem.
    public var kind: Kind
    /// 1-based line.
    public var line: Int
    /// A human-readable explanation.
    public var message: String
    /// The offending line.
    public var snippet: String

    /// `line: message`.
    public var description: String { "\(line): \(message)" }
}
