import FilmstripFormats
import FilmstripImaging
import FilmstripMedia
import Foundation

/// The frames of a file without video (an MP3, an M4A, a FLAC...): each decode is a frame without a picture at the
/// time its audio begins, as a stream's audio-only renditions give (``PlayerFrame/init(audioAt:)``), so the state
/// machine's timing, buffering and end rules hold. With no audio output attached the audio is decoded all the same,
/// to advance the timeline, and dropped.
final class AudioFileSource: FrameSource {
    private let decoder: AudioFileDecoder
    /// Whether an output hears the audio (else it is dropped once it has placed its frame).
    private let keepsAudio: Bool
    private var held: [AudioBuffer] = []

    init(_ decoder: AudioFileDecoder, keepsAudio: Bool) {
        self.decoder = decoder
        self.keepsAudio = keepsAudio
    }

    /// The file's cover picture fitted into `maximumSize` (the decoder's default without one), else a plain card.
    func card(maximumSize: PixelSize?) -> PixelBuffer {
        maximumSize.map { decoder.card(maximumSize: $0) } ?? decoder.card()
    }

    /// Shows the card on the player's video output, for as long as the audio plays.
    func showCard(on player: Player) {
        guard let output = player.shared.withLock({ $0.callbacks.output }) else { return }
        output.display(card(maximumSize: output.preferredMaximumSize), at: 0)
    }

    func seek(to time: Double) throws {
        held.removeAll()
        try decoder.seek(to: time)
    }

    func next() throws -> PlayerFrame? {
        guard let buffers = try decoder.nextBuffers() else { return nil }
        guard let first = buffers.first else { return try next() }
        if keepsAudio { held += buffers }
        return PlayerFrame(audioAt: first.time)
    }

    func interrupt() {}
    func cancel() { decoder.cancel() }
    var framesDecoded: Int { 0 }
    var bytesRead: Int { decoder.bytesRead }

    func takeAudio() -> [AudioBuffer] {
        defer { held.removeAll(keepingCapacity: true) }
        return held
    }

    var decodesAudio: Bool { keepsAudio }
    func restartAudio() {}
    func takeSeparateAudio() -> [AudioBuffer] { [] }
    var hasSeparateAudio: Bool { false }
    func setKeyframesOnly(_ on: Bool) {}
    var audioProblem: MediaError? { nil }
}
