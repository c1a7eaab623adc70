public import FilmstripFormats
public import FilmstripImaging
public import FilmstripMedia

/// Receives decoded frames from a player, at their presentation times (on the player's engine thread).
///
/// Frames come as RGB ``PixelBuffer``s, or, to an output that ``acceptsPlanarYUV``, as the decoder's own
/// ``PlanarYUVFrame`` planes whenever the picture allows it (8-bit 4:2:0 SDR); the others (10-bit, HDR, turned
/// pictures) still come as RGB, tone-mapped, at most ``preferredMaximumSize``.
public protocol VideoOutput: AnyObject, Sendable {
    /// A frame to show now. `time` is its presentation time in seconds.
    func display(_ image: PixelBuffer, at time: Double)
    /// Whether the output takes planar Y′CbCr frames (``display(_:at:)-(PlanarYUVFrame,_)``); false by default.
    var acceptsPlanarYUV: Bool { get }
    /// A frame to show now, as Y′CbCr planes (only when ``acceptsPlanarYUV``).
    func display(_ frame: PlanarYUVFrame, at time: Double)
    /// The largest size the output shows pictures at: RGB frames are scaled (and HDR tone-mapped) to fit it. `nil`
    /// (the default): the picture's display size.
    var preferredMaximumSize: PixelSize? { get }
    /// Seconds from a frame's being handed over to its being on screen (an upload and a present, say): the player
    /// hands each frame over that much before its time, at most 0.1 s. 0 by default.
    var presentationDelay: Double { get }
}

extension VideoOutput {
    public var acceptsPlanarYUV: Bool { false }
    public func display(_ frame: PlanarYUVFrame, at time: Double) {}
    public var preferredMaximumSize: PixelSize? { nil }
    public var presentationDelay: Double { 0 }
}

/// Playback statistics (``Player/getStats()`` and ``Player/onStats``).
public struct PlayerStats: Sendable, Hashable, Codable {
    /// The state when the statistics were taken.
    public var state: PlayerState.Kind
    /// Playhead position in seconds.
    public var position: Double
    /// Duration of the content in seconds (0 when unknown).
    public var duration: Double
    /// The playback rate in effect.
    public var playbackRate: Double
    /// Whether audio would be muted at this rate.
    public var audioMuted: Bool
    /// Frames decoded.
    public var decodedFrames: Int
    /// Video decoders this player has created for files and progressive sources since it was made: new content
    /// whose codec parameters (codec, size, extradata) match the previous content's reuses its decoder.
    public var decodersCreated = 0
    /// Frames shown (or, headless, whose time came).
    public var presentedFrames: Int
    /// Frames dropped because they were late.
    public var droppedFrames: Int
    /// Bytes read from the source.
    public var bytesRead: Int
    /// Seconds from `open` to the first frame, once known.
    public var startupTime: Double?
    /// Live with ``LiveConfiguration/optimizeLiveStartup``: the startup time it saved, in seconds, estimated at the
    /// first frame as the bits a usual start would have fetched first (`minPrebufferTime` at the start rendition)
    /// less those this start fetched (one segment of the lowest rendition), at the measured throughput.
    public var startupTimeSaved: Double?
    /// Seconds of frames decoded ahead of the playhead.
    public var bufferLength: Double = 0
    /// Stalls during playback (the forward buffer ran dry).
    public var rebufferCount: Int = 0
    /// Seconds spent in those stalls.
    public var rebufferTime: Double = 0
    /// Streams: the bitrate of the rendition playing (its `BANDWIDTH`, bits per second).
    public var bitrate: Int?
    /// Streams: the bandwidth estimate in bits per second.
    public var bandwidthEstimate: Double?
    /// Streams: segments fetched.
    public var segmentsLoaded: Int = 0
    /// Streams: the rendition playing, as an index into the renditions ordered by bandwidth (0: the lowest).
    public var rendition: Int?
    /// Whether the content is live.
    public var isLive = false
    /// Live: seconds between the playhead and the live edge (the end of the newest segment).
    public var liveLatency: Double?
    /// Whether the content is audio alone (an audio-only stream, or one whose video is absent): no frame is
    /// decoded or presented, and the playhead follows the audio.
    public var audioOnly = false
    /// Whether only keyframes are decoded and presented (rates above 2).
    public var keyframesOnly = false
    /// With an audio output: seconds of audio handed to it (its length in wall-clock time).
    public var audioPlayed: Double = 0
    /// Of ``audioPlayed``, the seconds of silence given while muted or at a rate outside 0.5...2.
    public var audioSilence: Double = 0
    /// With audio: the last presented frame's time minus the audio clock when it was presented (positive: the
    /// picture ahead of the sound), seconds.
    public var avDrift: Double?
    /// With audio: the largest ``avDrift`` in magnitude since the content was opened.
    public var maxAVDrift: Double?
}
