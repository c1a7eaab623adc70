public import FilmstripFormats
public import FilmstripImaging
public import Foundation

/// Sequential decoding of a file's audio for playback, when the file has no video (MP3, AAC, FLAC, Opus, Vorbis,
/// AC-3, WAV and the like, alone or in MP4, MPEG-TS, MPEG-PS, Ogg or Matroska), local or over http(s) with bounded
/// Range requests.
///
/// ```swift
/// let song = try AudioFileDecoder(url: songURL, format: .standard)
/// try song.seek(to: 30)
/// while let buffers = try song.nextBuffers() { play(buffers) }
/// ```
///
/// Times are seconds from the file's start. A file with video fails with `invalidArgument` (play it with
/// ``VideoDecoder``), one without audio either with `noVideoStream`. Blocking and not thread-safe; ``cancel()`` may
/// be called from any thread.
public final class AudioFileDecoder {
    private let input: MediaInput
    private let flag = CancellationFlag()
    private var skipBefore: Double?

    /// Opens `url` and its best audio stream, decoding to `format`. Blocks while opening.
    public init(
        url: URL, options: FrameExtractorConfiguration = FrameExtractorConfiguration(), format: AudioFormat
    ) throws {
        input = try MediaInput(
            .url(url, network: options.network), cancellation: flag, audio: format, audioOnly: true)
        guard input.isAudioOnly else {
            throw MediaError(.invalidArgument, "the input has video: play it with a VideoDecoder", url: url)
        }
        flag.begin(1)
    }

    /// Duration in seconds (0 when unknown).
    public var duration: Double { input.duration }
    /// Bytes read so far.
    public var bytesRead: Int { input.bytesRead }
    /// The codec's name (`mp3`, `aac`, `flac`, ...).
    public var codecName: String { input.audio.decoder?.codecName ?? "unknown" }

    /// The picture that stands for the file where a video would show one: its cover picture (an MP3's or M4A's
    /// attached art) fitted into `maximumSize`, else a plain placeholder card (``AudioFileCard``).
    public func card(maximumSize: PixelSize = PixelSize(width: 960, height: 540)) -> PixelBuffer {
        AudioFileCard.image(of: input, maximumSize: maximumSize)
    }

    /// Stops the current and every later read or decode (from any thread).
    public func cancel() { flag.cancelAll() }

    /// Moves so the next buffers start at `seconds` (what comes before it is trimmed).
    public func seek(to seconds: Double) throws {
        // Nothing read yet and the start asked for: already there. (A raw stream without an index, such as AMR or
        // LATM, seeks by FFmpeg's generic search, which can land past what probing read.)
        if seconds <= 0, !hasRead { return }
        try input.seek(to: max(0, seconds))
        skipBefore = seconds
    }

    /// Whether anything has been read since the open.
    private var hasRead = false

    /// The next decoded audio (possibly several buffers), or `nil` at the end. After a seek, the first buffers
    /// start at its target.
    public func nextBuffers() throws -> [AudioBuffer]? {
        hasRead = true
        while let buffers = try input.nextAudioOnly() {
            guard let skip = skipBefore else { return buffers }
            let kept = buffers.compactMap { $0.trimmed(before: skip) }
            if kept.isEmpty { continue }
            skipBefore = nil
            return kept
        }
        return nil
    }
}

extension AudioBuffer {
    /// The part of the buffer at or after `time` (`nil` when it ends before it).
    func trimmed(before time: Double) -> AudioBuffer? {
        let rate = Double(format.sampleRate)
        let channels = format.channels
        let frames = samples.count / max(1, channels)
        let drop = Int(((time - self.time) * rate).rounded(.down))
        guard drop > 0 else { return self }
        guard drop < frames else { return nil }
        return AudioBuffer(
            format: format, time: self.time + Double(drop) / rate, samples: Array(samples[(drop * channels)...]))
    }
}

// Confined to the thread that reads it, like the video decoders.
@available(*, unavailable)
extension AudioFileDecoder: Sendable {}
