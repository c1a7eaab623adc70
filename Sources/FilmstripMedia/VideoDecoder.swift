public import FilmstripImaging
public import Foundation

/// A decoded frame from a ``VideoDecoder``, converted to pixels only when asked.
public final class DecodedVideoFrame {
    /// Presentation time in seconds from the start of the video.
    public let time: Double
    /// Whether it is a keyframe.
    public let isKeyframe: Bool
    private let frame: OwnedFrame
    private let quarterTurns: Int
    private let displaySize: (Int, Int)

    init(_ frame: OwnedFrame, quarterTurns: Int, displaySize: (Int, Int)) {
        self.frame = frame
        time = frame.time
        isKeyframe = frame.isKey
        self.quarterTurns = quarterTurns
        self.displaySize = displaySize
    }

    /// The frame as RGB, fitted into `maximumSize` (keeping the aspect ratio) and turned per the display matrix.
    public func image(maximumSize: ImageSize? = nil) throws -> PixelBuffer {
        var (w, h) = displaySize
        if let maximumSize {
            (w, h) = PixelBuffer.fittingSize(
                width: w, height: h, maxWidth: maximumSize.width, maxHeight: maximumSize.height)
        }
        let (cw, ch) = quarterTurns % 2 == 1 ? (h, w) : (w, h)
        return try FrameConverter().image(frame.pointer, width: cw, height: ch, quarterTurns: quarterTurns)
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
    public init(url: URL, options: FrameExtractorOptions = FrameExtractorOptions()) throws {
        input = try MediaInput(url: url, network: options.network, cancellation: flag)
        flag.begin(1)
    }

    /// Duration in seconds (0 when unknown).
    public var duration: Double { input.duration }
    /// The display size (after sample aspect ratio and rotation).
    public var displaySize: ImageSize {
        let (w, h) = input.displaySize
        return ImageSize(width: w, height: h)
    }
    /// Bytes read so far.
    public var bytesRead: Int { input.bytesRead }
    /// Frames decoded so far.
    public var framesDecoded: Int { input.framesDecoded }

    /// Stops the current and every later read or decode (from any thread).
    public func cancel() { flag.cancelAll() }

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
            return DecodedVideoFrame(frame, quarterTurns: input.quarterTurns, displaySize: input.displaySize)
        }
        return nil
    }
}
