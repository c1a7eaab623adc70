public import FilmstripFormats
public import FilmstripImaging
import FilmstripLoading
public import FilmstripStreaming
import FilmstripSync
public import Foundation

/// A decoded frame from a ``VideoDecoder``, converted to pixels only when asked.
public final class DecodedVideoFrame {
    /// Presentation time in seconds from the start of the video.
    public let time: Double
    /// Whether it is a keyframe.
    public let isKeyframe: Bool
    private let frame: OwnedFrame
    private let geometry: FrameGeometry

    init(_ frame: OwnedFrame, geometry: FrameGeometry, timeOffset: Double = 0) {
        self.frame = frame
        time = frame.time + timeOffset
        isKeyframe = frame.isKey
        self.geometry = geometry
    }

    /// The same frame, placed `seconds` later on the timeline (the pixels are shared).
    public func shifted(by seconds: Double) -> DecodedVideoFrame {
        DecodedVideoFrame(
            frame, geometry: geometry, timeOffset: time - frame.time + seconds)
    }

    /// The frame as RGB, fitted into `maximumSize` (keeping the aspect ratio) and turned per the display matrix.
    public func image(maximumSize: PixelSize? = nil) throws -> PixelBuffer {
        try geometry.image(frame, fittingIn: maximumSize)
    }

    /// The frame's own planes as 8-bit Y′CbCr 4:2:0, for outputs that draw YUV; nil when the frame needs a
    /// conversion first (10-bit or HDR, which ``image(maximumSize:)`` tone-maps; other chroma layouts; a display
    /// matrix that turns it).
    public func planarYUV() -> PlanarYUVFrame? {
        geometry.planar(frame)
    }

    /// The display size (sample aspect ratio applied, turned upright).
    public var displaySize: PixelSize {
        PixelSize(width: geometry.displayWidth, height: geometry.displayHeight)
    }
}

/// Sequential decoding for playback, the one decoder for a file, an http(s) video or a forward-only byte stream:
/// frames in presentation order, from the start or (for files and URLs) from a seek.
///
/// ```swift
/// let file = try VideoDecoder(url: movieURL)
/// try file.seek(to: 42)
/// let segments = try VideoDecoder(label: segmentURL) { buffer in
///     try queue.read(into: buffer)          // blocks until bytes arrive; 0 at the end of the stream
/// }
/// while let frame = try segments.nextFrame() { show(frame) }
/// ```
///
/// Blocking and not thread-safe: use one decoder per playback thread. ``cancel()`` may be called from any thread
/// and stops a blocked read or decode promptly.
public final class VideoDecoder {
    private let input: MediaInput
    private let flag = CancellationFlag()
    /// The input's name in errors, and whether it can seek (a byte stream cannot).
    private let label: URL
    private let seekable: Bool
    private var skipBefore: Double?

    /// Opens `url` (a file or an http(s) video; over HTTP with bounded Range requests). Blocks while opening.
    ///
    /// With `previous` (a decoder no longer in use), its codec decoder is taken over, flushed, when `url`'s video
    /// has the same codec, size and codec extradata; ``reusedDecoder`` tells. `previous` cannot decode afterwards.
    ///
    /// With `audio`, the audio stream that goes with the video is decoded too, converted to that format; take it
    /// with ``takeAudio()`` as frames are read.
    public init(
        url: URL, options: FrameExtractorConfiguration = FrameExtractorConfiguration(),
        reusing previous: VideoDecoder? = nil,
        audio: AudioFormat? = nil
    ) throws {
        input = try MediaInput(
            .url(url, network: options.network), cancellation: flag, reusing: previous?.input, audio: audio,
            contentKeys: options.contentKeys.isEmpty && options.license == nil
                ? nil : ContentKeySource(keys: options.contentKeys, license: options.license))
        label = url
        seekable = true
        audioFormat = audio
        flag.begin(1)
        publishAudio()
    }

    /// Opens a forward-only byte stream (MPEG-TS, or fragmented MP4 with its initialisation section first; HLS
    /// feeds it the segments of one rendition back to back), reading from `read` until the video stream is known
    /// (blocks). `read` fills the buffer and returns the count, 0 at the end of the stream, and throws to fail the
    /// decoder. `label` names the stream in errors. Frame times are seconds from the stream's first timestamp, plus
    /// ``timeOffset``. With `audio`, the stream's audio is decoded too.
    public init(
        label: URL, audio: AudioFormat? = nil, contentKeys: ContentKeySource? = nil,
        read: @escaping @Sendable (UnsafeMutableRawBufferPointer) throws -> Int
    ) throws {
        input = try MediaInput(
            .stream(ByteStream(read: read), label: label), cancellation: flag, audio: audio, contentKeys: contentKeys)
        self.label = label
        seekable = false
        flag.begin(1)
        publishAudio()
    }

    /// Whether audio is decoded beside the video (asked for, present and decodable).
    public var hasAudio: Bool { audioState.withLock { $0.decoded } }

    /// The file's audio streams, in its order (a film with two languages has two).
    public var audioTracks: [MediaSummary.Audio] { MediaSummary(of: input).audio }

    /// The position in ``audioTracks`` of the one decoded, if any.
    public var selectedAudioTrack: Int? {
        let indices = input.audioStreamIndices
        return indices.firstIndex(of: input.audio.index)
    }

    /// Asks for another of ``audioTracks`` (a position in it) to be decoded from the next frame read on (any
    /// thread; the decoding thread makes the switch when it next reads). Audio decoded before it and not yet taken
    /// is dropped. Ignored without an audio format (see `init`) or for a position out of range.
    public func requestAudioTrack(_ position: Int) {
        requestedAudio.withLock { $0 = position }
    }

    private let requestedAudio = Mutex<Int?>(nil)
    private var audioFormat: AudioFormat?

    /// Makes a switch asked for with ``requestAudioTrack(_:)`` (decoding thread).
    private func applyAudioRequest() {
        guard
            let position = requestedAudio.withLock({ pending -> Int? in
                defer { pending = nil }
                return pending
            }), let audioFormat
        else { return }
        let indices = input.audioStreamIndices
        guard indices.indices.contains(position) else { return }
        input.switchAudio(to: indices[position], format: audioFormat)
        publishAudio()
    }

    /// What other threads read of the input's audio (the input itself belongs to the decoding thread): whether it is
    /// decoded, and why not. Published by that thread as the input opens and after each switch.
    private let audioState = Mutex<(decoded: Bool, problem: MediaError?)>((false, nil))

    private func publishAudio() {
        let state = (input.hasAudio, input.audio.problem)
        audioState.withLock { $0 = state }
    }

    /// Why the input's audio is not decoded, when it has audio FFmpeg cannot decode.
    public var audioProblem: MediaError? { audioState.withLock { $0.problem } }

    /// The audio decoded while reading frames so far, in presentation order and placed on the timeline like the
    /// frames (``timeOffset`` added), handed over once. After a seek, audio before the seek target is included (from
    /// the keyframe on); trim it as needed.
    public func takeAudio() -> [AudioBuffer] {
        let audio = input.audio.take()
        guard timeOffset != 0 else { return audio }
        return audio.map { buffer in
            var placed = buffer
            placed.time += timeOffset
            return placed
        }
    }

    /// Whether the codec decoder was taken over from the `previous` decoder given at creation.
    public var reusedDecoder: Bool { input.reusedDecoder }

    /// Duration in seconds (0 when unknown, as for a byte stream).
    public var duration: Double { input.duration }
    /// The display size (after sample aspect ratio and rotation).
    public var displaySize: PixelSize {
        let (w, h) = input.displaySize
        return PixelSize(width: w, height: h)
    }
    /// Bytes read so far.
    public var bytesRead: Int { input.bytesRead }
    /// Frames decoded so far.
    public var framesDecoded: Int { input.framesDecoded }

    /// Stops the current and every later read or decode (from any thread).
    public func cancel() { flag.cancelAll() }

    /// Whether only keyframes are decoded (trick play: each comes out at once, the frames between them are skipped).
    /// Turned off, decoding resumes at the next keyframe.
    public var keyframesOnly: Bool {
        get { input.keyframesOnly }
        set { input.keyframesOnly = newValue }
    }

    /// Seconds added to every frame and audio time (to place a stream on a playlist's timeline); 0 by default.
    public var timeOffset = 0.0

    /// The input's first timestamp in seconds of media time: a frame's media time is its
    /// ``DecodedVideoFrame/time`` minus ``timeOffset`` plus this.
    public var startSeconds: Double { input.startSeconds }

    /// Moves so the next frame is the first one at or after `seconds`: seeks to the keyframe before it, and
    /// decodes and drops the frames in between. A byte stream cannot seek (`invalidArgument`).
    public func seek(to seconds: Double) throws {
        guard seekable else {
            throw MediaError(.invalidArgument, "a forward-only byte stream cannot seek", url: label)
        }
        try input.seek(to: max(0, seconds))
        skipBefore = seconds
    }

    /// The next frame in presentation order, or `nil` at the end.
    public func nextFrame() throws -> DecodedVideoFrame? {
        applyAudioRequest()
        while let frame = try input.nextFrame() {
            if let skip = skipBefore {
                if frame.time < skip - MediaTime.tolerance { continue }
                skipBefore = nil
            }
            return DecodedVideoFrame(frame, geometry: input.geometry, timeOffset: timeOffset)
        }
        return nil
    }
}

// Decoders belong to the one thread that reads them (``VideoDecoder/cancel()`` excepted); they are never shared
// between concurrency domains.
@available(*, unavailable)
extension VideoDecoder: Sendable {}
