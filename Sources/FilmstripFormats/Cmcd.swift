/// Common Media Client Data (CTA-5004, version 1): what a player tells the CDN with each request.
///
/// Set what is known; ``CmcdEncoder`` drops what is not set and applies the spec's rounding.
///
/// ```swift
/// var data = CmcdData(sessionID: "6e2fb550-c457-11e9-bb97-0800200c9a66")
/// data.objectType = .video
/// data.encodedBitrate = 3200
/// data.objectDuration = 4004
/// let headers = CmcdEncoder.headers(data)   // ["CMCD-Object": "br=3200,d=4004,ot=v", "CMCD-Session": "sid=\"…\""]
/// ```
public struct CmcdData: Sendable, Hashable {
    /// `ot`: the kind of object requested.
    public enum ObjectType: String, Sendable, Hashable, CaseIterable {
        /// Manifest or playlist.
        case manifest = "m"
        /// Audio only.
        case audio = "a"
        /// Video only.
        case video = "v"
        /// Muxed audio and video.
        case muxed = "av"
        /// Initialisation segment.
        case initSegment = "i"
        /// Caption or subtitle.
        case caption = "c"
        /// Timed text.
        case timedText = "tt"
        /// Cryptographic key, license or certificate.
        case key = "k"
        /// Anything else.
        case other = "o"
    }

    /// `sf`: the streaming format.
    public enum StreamingFormat: String, Sendable, Hashable, CaseIterable {
        /// MPEG-DASH.
        case dash = "d"
        /// HLS.
        case hls = "h"
        /// Smooth Streaming.
        case smooth = "s"
        /// Other.
        case other = "o"
    }

    /// `st`: the stream type.
    public enum StreamType: String, Sendable, Hashable, CaseIterable {
        /// Video on demand.
        case vod = "v"
        /// Live.
        case live = "l"
    }

    // Object shard
    /// `br`: encoded bitrate of the object, kbps.
    public var encodedBitrate: Double?
    /// `d`: playback duration of the object, milliseconds.
    public var objectDuration: Double?
    /// `ot`: object type.
    public var objectType: ObjectType?
    /// `tb`: top bitrate available to the client, kbps.
    public var topBitrate: Double?

    // Request shard
    /// `bl`: buffer length, milliseconds (sent rounded to the nearest 100).
    public var bufferLength: Double?
    /// `dl`: deadline, milliseconds (rounded to the nearest 100).
    public var deadline: Double?
    /// `mtp`: measured throughput, kbps (rounded to the nearest 100).
    public var measuredThroughput: Double?
    /// `nor`: the next object the client expects to request, relative to this request.
    public var nextObjectRequest: String?
    /// `nrr`: the next byte range, `"start-end"`.
    public var nextRangeRequest: String?
    /// `su`: the object is needed urgently (start-up, seek, recovery).
    public var startup = false

    // Session shard
    /// `cid`: content identifier (at most 64 characters).
    public var contentID: String?
    /// `pr`: playback rate (omitted when 1).
    public var playbackRate: Double?
    /// `sf`: streaming format.
    public var streamingFormat: StreamingFormat?
    /// `sid`: session identifier (at most 64 characters).
    public var sessionID: String?
    /// `st`: stream type.
    public var streamType: StreamType?
    /// `v`: CMCD version (omitted when 1).
    public var version: Int?

    // Status shard
    /// `bs`: the buffer ran empty since the previous request.
    public var bufferStarvation = false
    /// `rtp`: requested maximum throughput, kbps (rounded to the nearest 100).
    public var requestedMaximumThroughput: Double?

    /// Custom keys; a custom key must contain a hyphen (for example `com.example-hello`).
    public var custom: [String: CmcdValue] = [:]

    /// Creates data with the session fields that rarely change.
    public init(
        sessionID: String? = nil, contentID: String? = nil, streamingFormat: StreamingFormat? = nil,
        streamType: StreamType? = nil
    ) {
        self.sessionID = sessionID
        self.contentID = contentID
        self.streamingFormat = streamingFormat
        self.streamType = streamType
    }
}

/// A value of a custom CMCD key.
public enum CmcdValue: Sendable, Hashable {
    /// A quoted string.
    case string(String)
    /// An integer.
    case integer(Int)
    /// A decimal (up to three places).
    case decimal(Double)
    /// A boolean: `true` is the bare key, `false` is omitted.
    case boolean(Bool)
    /// A bare token.
    case token(String)
}

/// The four CMCD header shards.
public enum CmcdShard: String, Sendable, Hashable, CaseIterable {
    /// `CMCD-Object`: keys that vary with the object requested.
    case object = "CMCD-Object"
    /// `CMCD-Request`: keys that vary with each request.
    case request = "CMCD-Request"
    /// `CMCD-Session`: keys invariant over the session.
    case session = "CMCD-Session"
    /// `CMCD-Status`: keys that vary rarely.
    case status = "CMCD-Status"

    /// The shard a standard key belongs to; custom keys go to ``request`` unless told otherwise.
    public static func of(_ key: String) -> CmcdShard {
        switch key {
        case "br", "d", "ot", "tb": .object
        case "cid", "pr", "sf", "sid", "st", "v": .session
        case "bs", "rtp": .status
        default: .request
        }
    }
}
