import FilmstripMedia
import Foundation

/// What the player's timeline advances by: a decoded picture or, for audio-only content, the start of decoded audio
/// (a frame without a picture, presented like one, so the state machine's timing, buffering and end rules hold).
struct PlayerFrame {
    /// Presentation time, seconds on the player's timeline.
    let time: Double
    let isKeyframe: Bool
    /// The picture; `nil` for audio-only content.
    let picture: DecodedVideoFrame?

    init(_ picture: DecodedVideoFrame) {
        time = picture.time
        isKeyframe = picture.isKeyframe
        self.picture = picture
    }

    /// Where decoded audio begins (audio-only content); every such frame is a keyframe (decodes on its own).
    init(audioAt time: Double) {
        self.time = time
        isKeyframe = true
        picture = nil
    }
}

extension VideoOutput {
    /// Shows `picture` at `time`: as planar YUV when the output takes it, else as an image of its preferred size.
    func show(_ picture: DecodedVideoFrame, at time: Double) {
        if acceptsPlanarYUV, let planar = picture.planarYUV() {
            display(planar, at: time)
        } else if let image = try? picture.image(maximumSize: preferredMaximumSize) {
            display(image, at: time)
        }
    }
}

/// Where a ``FrameFeeder`` gets frames: a file decoder or a stream. Used by the feeder's thread only, except
/// ``interrupt()`` and ``cancel()``.
protocol FrameSource: AnyObject {
    /// The next frame is the first at or after `time`.
    func seek(to time: Double) throws
    /// A seek that follows the stream reset `token` (``StreamSession/seek(to:)``): reads resume only if no later
    /// reset came. Sources that read no stream ignore it.
    func seek(to time: Double, after token: StreamSession.ReadToken?) throws
    /// The next frame in presentation order; `nil` at the end.
    func next() throws -> PlayerFrame?
    /// Wakes a read blocked on data because a seek is coming (any thread).
    func interrupt()
    /// Stops every read and decode for good (any thread).
    func cancel()
    var framesDecoded: Int { get }
    var bytesRead: Int { get }
    /// The audio decoded with the frames so far, on the same timeline, handed over once.
    func takeAudio() -> [AudioBuffer]
    /// Whether audio is being decoded with the frames (feeder thread).
    var decodesAudio: Bool { get }
    /// Another audio track plays: what was decoded of the previous one is dropped (any thread).
    func restartAudio()
    /// Audio decoded apart from the frames (a stream's separate audio renditions), handed over once (any thread).
    func takeSeparateAudio() -> [AudioBuffer]
    /// Whether audio comes apart from the frames (any thread).
    var hasSeparateAudio: Bool { get }
    /// Decodes keyframes only (trick play), or every frame again (feeder thread).
    func setKeyframesOnly(_ on: Bool)
    /// Why the source's audio is not decoded, when it has audio FFmpeg cannot decode (any thread).
    var audioProblem: MediaError? { get }
    /// Decodes another of a file's audio streams (a position in its list) from the next read on (any thread).
    func selectAudioTrack(_ position: Int)
}

extension FrameSource {
    func seek(to time: Double, after token: StreamSession.ReadToken?) throws { try seek(to: time) }
    /// Decodes another of a file's audio streams from the next read on (any thread); sources of one audio stream
    /// ignore it.
    func selectAudioTrack(_ position: Int) {}
}

extension VideoDecoder: FrameSource {
    func next() throws -> PlayerFrame? { try nextFrame().map(PlayerFrame.init) }
    func interrupt() {}
    func restartAudio() {}
    func takeSeparateAudio() -> [AudioBuffer] { [] }
    var hasSeparateAudio: Bool { false }
    func setKeyframesOnly(_ on: Bool) { keyframesOnly = on }
    var decodesAudio: Bool { hasAudio }
    func selectAudioTrack(_ position: Int) { requestAudioTrack(position) }
}
