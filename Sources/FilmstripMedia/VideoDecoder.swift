public import FilmstripFormats
public import FilmstripImaging
import FilmstripLoading
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
}

/// Sequential decoding for playback: frames in presentation order, from the start or from a seek.
///
/// Blocking and not thread-safe: use one decoder per playback thread. ``cancel()`` may be called from any thread
/// and stops a blocked read or decode promptly.
public final class VideoDecoder {
    private let input: MediaInput
    private let flag = CancellationFlag()
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
            .url(url, network: options.network), cancellation: flag, reusing: previous?.input, audio: audio)
        flag.begin(1)
    }

    /// Whether audio is decoded beside the video (asked for, present and decodable).
    public var hasAudio: Bool { input.hasAudio }

    /// Why the input's audio is not decoded, when it has audio FFmpeg cannot decode.
    public var audioProblem: MediaError? { input.audioProblem }

    /// The audio decoded while reading frames so far, in presentation order, handed over once. After a seek, audio
    /// before the seek target is included (from the keyframe on); trim it as needed.
    public func takeAudio() -> [AudioBuffer] { input.takeAudio() }

    /// Whether the codec decoder was taken over from the `previous` decoder given at creation.
    public var reusedDecoder: Bool { input.reusedDecoder }

    /// Duration in seconds (0 when unknown).
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

    /// Moves so the next frame is the first one at or after `seconds`: seeks to the keyframe before it, and
    /// decodes and drops the frames in between.
    public func seek(to seconds: Double) throws {
        try input.seek(to: max(0, seconds))
        skipBefore = seconds
    }

    /// The next frame in presentation order, or `nil` at the end.
    public func nextFrame() throws -> DecodedVideoFrame? {
        while let frame = try input.nextFrame() {
            if let skip = skipBefore {
                if frame.time < skip - 1e-6 { continue }
                skipBefore = nil
            }
            return DecodedVideoFrame(frame, geometry: input.geometry)
        }
        return nil
    }
}

/// Decodes video from a forward-only byte stream: MPEG-TS, or fragmented MP4 with its initialisation section first.
/// Segment-based streaming (HLS) feeds it the segments of one rendition back to back.
///
/// ```swift
/// let decoder = try StreamDecoder(label: segmentURL) { buffer in
///     try queue.read(into: buffer)          // blocks until bytes arrive; 0 at the end of the stream
/// }
/// while let frame = try decoder.nextFrame() { show(frame) }
/// ```
///
/// Blocking and not thread-safe, like ``VideoDecoder``. Frame times are seconds from the stream's first timestamp.
public final class StreamDecoder {
    private let input: MediaInput
    private let flag = CancellationFlag()

    /// Opens the stream, reading from `read` until the video stream is known (blocks). `read` fills the buffer and
    /// returns the count, 0 at the end of the stream, and throws to fail the decoder. `label` names the stream in
    /// errors.
    ///
    /// With `audio`, the stream's audio is decoded too (see ``VideoDecoder/init(url:options:reusing:audio:)``).
    public init(
        label: URL, audio: AudioFormat? = nil, read: @escaping @Sendable (UnsafeMutableRawBufferPointer) throws -> Int
    ) throws {
        input = try MediaInput(.stream(ByteStream(read: read), label: label), cancellation: flag, audio: audio)
        flag.begin(1)
    }

    /// Whether audio is decoded beside the video.
    public var hasAudio: Bool { input.hasAudio }

    /// Why the stream's audio is not decoded, when it has audio FFmpeg cannot decode.
    public var audioProblem: MediaError? { input.audioProblem }

    /// The audio decoded so far, placed on the timeline like the frames (``timeOffset`` added), handed over once.
    public func takeAudio() -> [AudioBuffer] {
        input.takeAudio().map { buffer in
            var placed = buffer
            placed.time += timeOffset
            return placed
        }
    }

    /// The display size (after sample aspect ratio and rotation).
    public var displaySize: PixelSize {
        let (w, h) = input.displaySize
        return PixelSize(width: w, height: h)
    }
    /// Bytes read from the stream so far.
    public var bytesRead: Int { input.bytesRead }
    /// Frames decoded so far.
    public var framesDecoded: Int { input.framesDecoded }

    /// Stops the current and every later read or decode (from any thread).
    public func cancel() { flag.cancelAll() }

    /// Whether only keyframes are decoded (see ``VideoDecoder/keyframesOnly``).
    public var keyframesOnly: Bool {
        get { input.keyframesOnly }
        set { input.keyframesOnly = newValue }
    }

    /// Seconds added to every frame time (to place the stream on a playlist's timeline).
    public var timeOffset = 0.0

    /// The stream's first timestamp in seconds of media time: a frame's media time is its ``DecodedVideoFrame/time``
    /// minus ``timeOffset`` plus this.
    public var startSeconds: Double { input.startSeconds }

    /// The next frame in presentation order, or `nil` at the end of the stream.
    public func nextFrame() throws -> DecodedVideoFrame? {
        guard let frame = try input.nextFrame() else { return nil }
        return DecodedVideoFrame(
            frame, geometry: input.geometry, timeOffset: timeOffset)
    }
}

// Decoders belong to the one thread that reads them (``VideoDecoder/cancel()`` and its kin excepted); they are never
// shared between concurrency domains.
@available(*, unavailable)
extension VideoDecoder: Sendable {}

@available(*, unavailable)
extension StreamDecoder: Sendable {}
