public import FilmstripMedia
import FilmstripSync
public import Foundation

/// Where a ``Player`` sends the audio it plays (``Player/attach(audio:)``): PCM in the output's ``format``, in
/// order, each buffer when its time comes.
///
/// The player's audio clock is the media time of what the output has been given minus what it holds unheard
/// (``latency``); with audio present, video frames are presented against that clock. An output with its own
/// hardware clock reports how much it holds, so the picture follows the sound.
///
/// Buffers come from the player's thread; an output must not block for long.
public protocol AudioOutput: AnyObject, Sendable {
    /// The PCM format the output takes (the player decodes and converts to it). Read when content is loaded.
    var format: AudioFormat { get }
    /// Seconds of audio handed over and not yet heard (0 when the output plays, or writes, at once).
    var latency: Double { get }
    /// Seconds of audio the output wants ahead of its time (a device's buffer, so it never runs dry); 0 for outputs
    /// that write at once, such as files.
    var preferredLead: Double { get }
    /// Plays `buffer`. Its ``AudioBuffer/time`` is the media time of its first sample; at rates other than 1 a
    /// buffer covers more (or less) media time than its length, and outside 0.5...2 it is silence.
    func play(_ buffer: AudioBuffer)
    /// Drops what is held and not yet heard (a seek or a stop).
    func flush()
}

extension AudioOutput {
    public var latency: Double { 0 }
    public var preferredLead: Double { 0 }
    public func flush() {}
}

/// An ``AudioOutput`` that writes what is played to a WAV file (16-bit PCM), for headless playback, tests and
/// archiving. The header is kept valid after every write, so the file can be read while playback goes on and
/// survives a process that is killed.
public final class WAVFileOutput: AudioOutput {
    public let format: AudioFormat
    public let url: URL
    private let state: Mutex<State>

    private struct State {
        var handle: FileHandle?
        var frames = 0
        var failure: String?
    }

    /// Creates (or replaces) the file at `url`.
    public init(url: URL, format: AudioFormat = .standard) throws {
        self.format = format
        self.url = url
        guard FileManager.default.createFile(atPath: url.path, contents: Self.header(format: format, frames: 0)) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: url.path])
        }
        let handle = try FileHandle(forWritingTo: url)
        try handle.seekToEnd()
        state = Mutex(State(handle: handle))
    }

    /// Sample frames written so far.
    public var framesWritten: Int { state.withLock { $0.frames } }

    /// Seconds of audio written so far.
    public var secondsWritten: Double { Double(framesWritten) / Double(format.sampleRate) }

    /// Why writing stopped (a full disk, a removed file), when it did.
    public var failure: String? { state.withLock { $0.failure } }

    public func play(_ buffer: AudioBuffer) {
        guard buffer.format == format, buffer.frameCount > 0 else { return }
        var pcm = Data(count: buffer.frameCount * format.channels * 2)
        pcm.withUnsafeMutableBytes { raw in
            let out = raw.bindMemory(to: Int16.self)
            for (i, sample) in buffer.samples.prefix(out.count).enumerated() {
                out[i] = Int16(littleEndian: Int16((max(-1, min(1, sample)) * 32767).rounded()))
            }
        }
        state.withLock { state in
            guard let handle = state.handle else { return }
            do {
                try handle.write(contentsOf: pcm)
                state.frames += buffer.frameCount
                // Keep the sizes in the header current.
                let header = Self.header(format: format, frames: state.frames)
                try handle.seek(toOffset: 0)
                try handle.write(contentsOf: header)
                try handle.seekToEnd()
            } catch {
                state.failure = "\(error)"
                try? handle.close()
                state.handle = nil
            }
        }
    }

    /// Closes the file (later buffers are ignored).
    public func close() {
        state.withLock { state in
            try? state.handle?.close()
            state.handle = nil
        }
    }

    deinit { close() }

    /// A canonical 44-byte RIFF/WAVE header for 16-bit PCM.
    static func header(format: AudioFormat, frames: Int) -> Data {
        let channels = format.channels
        let dataBytes = UInt32(clamping: frames * channels * 2)
        var header = Data()
        func put(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { header.append(contentsOf: $0) } }
        func put16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { header.append(contentsOf: $0) } }
        header.append(contentsOf: Array("RIFF".utf8))
        put(36 &+ dataBytes)
        header.append(contentsOf: Array("WAVEfmt ".utf8))
        put(16)
        put16(1)
        put16(UInt16(channels))
        put(UInt32(format.sampleRate))
        put(UInt32(format.sampleRate * channels * 2))
        put16(UInt16(channels * 2))
        put16(16)
        header.append(contentsOf: Array("data".utf8))
        put(dataBytes)
        return header
    }
}
