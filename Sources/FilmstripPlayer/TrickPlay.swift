import FilmstripFormats
import FilmstripMedia
import Foundation

/// How frames are produced at a playback rate (SPEC 4.9), as a value.
///
/// - From 0 to 2: every frame, forward, from the normal source.
/// - Above 2 (and at 2 or below in reverse): keyframes only. A stream with an I-frame track (an HLS I-frame playlist
///   or a DASH trick-mode set) plays that track's frames, fetching only their byte ranges; otherwise the keyframes
///   are decoded from the normal stream (forward: the normal source's keyframes-only mode; reverse: its segments or
///   spans, one at a time, backwards).
/// - Between -2 and 0 (exclusive): every frame, backwards: each segment (a stream) or two-second span (a file) is
///   decoded forward from its keyframe and its frames are presented in reverse.
public struct TrickPlayMode: Sendable, Hashable {
    /// Frames go backwards in time.
    public var backward: Bool
    /// Only keyframes are decoded and presented.
    public var keyframesOnly: Bool
    /// The frames come from the stream's I-frame track.
    public var iFrameTrack: Bool

    /// The rate above which (and at or below whose negative) only keyframes are presented.
    public static let keyframeRate = 2.0

    /// The mode for `rate`, given whether the source has an I-frame track; `nil` for the normal forward source
    /// (with ``keyframesOnly(rate:)`` telling whether it decodes keyframes only).
    public static func mode(rate: Double, hasIFrameTrack: Bool) -> TrickPlayMode? {
        if rate < 0 {
            let fast = rate <= -keyframeRate
            return TrickPlayMode(
                backward: true, keyframesOnly: fast, iFrameTrack: hasIFrameTrack && fast)
        }
        if rate > keyframeRate, hasIFrameTrack {
            return TrickPlayMode(backward: false, keyframesOnly: true, iFrameTrack: true)
        }
        return nil
    }

    /// Whether the normal forward source decodes keyframes only at `rate`.
    public static func keyframesOnly(rate: Double) -> Bool { rate > keyframeRate }
}

/// A source's content cut into chunks that decode on their own (a stream's segments or I-frames, a file's spans),
/// for ``TrickPlaySource``. Used by the feeder thread, except ``interrupt()`` and ``cancel()``.
protocol TrickChunks: AnyObject {
    /// The chunks' spans on the player's timeline, in time order.
    func spans() throws -> [Range<Double>]
    /// The frames of chunk `index` in presentation order (keyframes only when asked).
    func frames(of index: Int, keyframesOnly: Bool) throws -> [DecodedVideoFrame]
    /// Wakes a fetch or decode in progress (a seek is coming); later ones fail until ``resume()``.
    func interrupt()
    /// The seek is being carried out: fetches and decodes work again.
    func resume()
    /// Stops every fetch and decode for good.
    func cancel()
    var framesDecoded: Int { get }
    var bytesRead: Int { get }
}

/// Frames for trick play, a chunk at a time in the direction of play: forward in time order, or backward with each
/// chunk's frames reversed.
final class TrickPlaySource: FrameSource {
    private let chunks: any TrickChunks
    let mode: TrickPlayMode
    private var keyframesOnly: Bool
    private var spans: [Range<Double>]?
    /// The next chunk to decode, and the frames of the current one not yet handed out (in the order of play).
    private var cursor = 0
    private var ready: [DecodedVideoFrame] = []
    /// Frames beyond this time (against the direction of play) are skipped: the seek target.
    private var target: Double?
    /// Where the first frame comes from, until a seek says otherwise.
    private var startAt: Double?

    /// A source whose first frame is the one at `start` (the first at or before it, backwards).
    init(chunks: any TrickChunks, mode: TrickPlayMode, start: Double) {
        self.chunks = chunks
        self.mode = mode
        keyframesOnly = mode.keyframesOnly
        startAt = start
    }

    func seek(to time: Double) throws {
        startAt = nil
        chunks.resume()
        let spans = try loadedSpans()
        ready = []
        target = time
        if mode.backward {
            cursor = spans.lastIndex { $0.lowerBound <= time + MediaTime.tolerance } ?? -1
        } else {
            cursor = spans.firstIndex { $0.upperBound > time + MediaTime.tolerance } ?? spans.count
        }
    }

    func next() throws -> PlayerFrame? {
        if let startAt { try seek(to: startAt) }
        let spans = try loadedSpans()
        while ready.isEmpty {
            guard spans.indices.contains(cursor) else { return nil }
            var frames = try chunks.frames(of: cursor, keyframesOnly: keyframesOnly)
            cursor += mode.backward ? -1 : 1
            if mode.backward { frames.reverse() }
            if let target {
                frames.removeAll {
                    mode.backward ? $0.time > target + MediaTime.tolerance : $0.time < target - MediaTime.tolerance
                }
                if !frames.isEmpty { self.target = nil }
            }
            ready = frames
        }
        return PlayerFrame(ready.removeFirst())
    }

    private func loadedSpans() throws -> [Range<Double>] {
        if let spans { return spans }
        let loaded = try chunks.spans()
        spans = loaded
        return loaded
    }

    func interrupt() { chunks.interrupt() }
    func cancel() { chunks.cancel() }
    var framesDecoded: Int { chunks.framesDecoded }
    var bytesRead: Int { chunks.bytesRead }
    func takeAudio() -> [AudioBuffer] { [] }
    var decodesAudio: Bool { false }
    func restartAudio() {}
    func takeSeparateAudio() -> [AudioBuffer] { [] }
    var hasSeparateAudio: Bool { false }
    /// Keyframes only below -2x, every frame again above (the I-frame track has keyframes only either way).
    func setKeyframesOnly(_ on: Bool) { keyframesOnly = on || mode.iFrameTrack }
    var audioProblem: MediaError? { nil }
}

/// A file's content in two-second spans, each decoded from the keyframe before it with its own ``VideoDecoder``.
final class FileChunks: TrickChunks {
    private let decoder: VideoDecoder
    static let span = 2.0

    init(decoder: VideoDecoder) {
        self.decoder = decoder
    }

    func spans() throws -> [Range<Double>] {
        let duration = decoder.duration
        guard duration > 0 else { return [] }
        let count = Int((duration / Self.span).rounded(.up))
        return (0..<count).map { index in
            Double(index) * Self.span..<min(duration, Double(index + 1) * Self.span)
        }
    }

    func frames(of index: Int, keyframesOnly: Bool) throws -> [DecodedVideoFrame] {
        let start = Double(index) * Self.span
        decoder.keyframesOnly = keyframesOnly
        try decoder.seek(to: start)
        var frames: [DecodedVideoFrame] = []
        while let frame = try decoder.nextFrame(), frame.time < start + Self.span - MediaTime.tolerance {
            frames.append(frame)
        }
        return frames
    }

    func interrupt() {}
    func resume() {}
    func cancel() { decoder.cancel() }
    var framesDecoded: Int { decoder.framesDecoded }
    var bytesRead: Int { decoder.bytesRead }
}

// Used by the feeder thread only (see the module's thread map).
@available(*, unavailable)
extension TrickPlaySource: Sendable {}

@available(*, unavailable)
extension FileChunks: Sendable {}
