import CSDL
import Filmstrip
import FilmstripSync
import Foundation

/// Sound through an SDL audio device in callback mode: PCM in the device's format, kept in a ring the device pulls
/// from on its own thread. Each pull is time-stamped, so what is heard is known between pulls too (the way ffplay
/// keeps its audio clock), not only in steps of a device period.
final class WindowAudio: Sendable {
    let format: AudioFormat
    /// Seconds the player keeps handed over ahead of what is heard.
    let lead: Double
    /// What the device and the sound server hold at the moment of a pull, the pulled period included (see
    /// ``init(ring:format:bufferFrames:)``).
    let deviceLatency: Double
    let ring: AudioRing

    /// At a pull, the period just taken plays after what the device still holds: about one more period. The
    /// estimate is two periods, less the time since the pull; `FILMSTRIP_AUDIO_LATENCY_MS` replaces the two periods
    /// with a figure measured for a device (`make bench` measures it through a capture of the sound server).
    init(ring: AudioRing, format: AudioFormat, bufferFrames: Int) {
        self.ring = ring
        self.format = format
        let period = Double(bufferFrames) / Double(format.sampleRate)
        if let text = ProcessInfo.processInfo.environment["FILMSTRIP_AUDIO_LATENCY_MS"], let ms = Double(text),
            ms.isFinite, ms >= 0, ms < 2000
        {
            deviceLatency = ms / 1000
        } else {
            deviceLatency = 2 * period
        }
        // The player keeps `lead` handed over ahead of what is heard: the device's part, plus the ring kept at three
        // periods or 50 ms at least, so a pull never finds the ring short.
        lead = deviceLatency + max(0.05, 3 * period)
        ring.floatsPerSecond = Double(format.sampleRate * format.channels)
    }

    /// Seconds handed over and not yet heard: the ring, and what the device holds from its last pull, less the time
    /// it has played since; 0 once the device is closed.
    var latency: Double {
        // A closed device holds nothing: the player goes on on the system clock.
        guard let (queued, pulled) = ring.state() else { return 0 }
        guard let pulled else { return queued + deviceLatency }
        return queued + max(0, deviceLatency - max(0, ring.clock() - pulled))
    }

    func queue(_ buffer: AudioBuffer) {
        guard buffer.format == format, !buffer.samples.isEmpty else { return }
        ring.append(buffer.samples, time: buffer.time)
    }

    func clear() { ring.clear() }
}

/// The PCM between the player and the device: appended by the player's thread, pulled by SDL's audio thread.
final class AudioRing: Sendable {
    private struct State {
        var chunks: [[Float]] = []
        /// The first chunk not fully pulled, and the samples of it already pulled.
        var head = 0
        var offset = 0
        var queued = 0
        /// The monotonic time of the last pull.
        var pulled: Double?
        /// Samples (all channels) per second: the device's format, known once it is open.
        var floatsPerSecond = 96_000.0
        /// The device was closed: nothing is kept, nothing is held.
        var closed = false
    }

    private let mutex = Mutex(State())
    let trace: WindowTrace?

    /// Seconds on the clock pulls are stamped with (monotonic; tests pass their own).
    let clock: @Sendable () -> Double

    init(trace: WindowTrace?, clock: @escaping @Sendable () -> Double = monotonicSeconds) {
        self.trace = trace
        self.clock = clock
    }

    /// Samples (all channels) per second.
    var floatsPerSecond: Double {
        get { mutex.withLock { $0.floatsPerSecond } }
        set { mutex.withLock { $0.floatsPerSecond = newValue } }
    }

    /// Seconds queued, and the time of the last pull on ``clock``; `nil` once the device is closed.
    func state() -> (queued: Double, pulled: Double?)? {
        mutex.withLock { $0.closed ? nil : (Double($0.queued) / $0.floatsPerSecond, $0.pulled) }
    }

    // The trace is written under the ring's lock, so its lines come in the order the ring saw them.

    func append(_ samples: [Float], time: Double) {
        mutex.withLock { state in
            guard !state.closed else { return }
            state.chunks.append(samples)
            state.queued += samples.count
            trace?.record(.queued(time: time, seconds: Double(samples.count) / state.floatsPerSecond))
        }
    }

    func clear() {
        mutex.withLock { state in
            state.chunks.removeAll(keepingCapacity: true)
            state.head = 0
            state.offset = 0
            state.queued = 0
            trace?.record(.cleared)
        }
    }

    /// The device is closed (no more pulls): what is queued is dropped, and so is what comes later.
    func close() {
        clear()
        mutex.withLock { $0.closed = true }
    }

    /// Fills `count` floats at `output` (the device's pull, on SDL's audio thread); silence where the ring is short.
    func pull(into output: UnsafeMutablePointer<Float>, count: Int) {
        let stamp = clock()
        let filled = mutex.withLock { state in
            var filled = 0
            while filled < count, state.head < state.chunks.count {
                let chunk = state.chunks[state.head]
                let take = min(count - filled, chunk.count - state.offset)
                chunk.withUnsafeBufferPointer { source in
                    (output + filled).update(from: source.baseAddress! + state.offset, count: take)
                }
                filled += take
                state.offset += take
                if state.offset == chunk.count {
                    state.head += 1
                    state.offset = 0
                }
            }
            state.queued -= filled
            if state.head > 64 {
                state.chunks.removeFirst(state.head)
                state.head = 0
            }
            state.pulled = stamp
            trace?.record(
                .pulled(
                    seconds: Double(count) / state.floatsPerSecond,
                    short: Double(count - filled) / state.floatsPerSecond))
            return filled
        }
        if filled < count { (output + filled).update(repeating: 0, count: count - filled) }
    }

    /// SDL's callback: `userdata` is the ring.
    static let callback: SDL_AudioCallback = { userdata, stream, length in
        guard let userdata, let stream, length > 0 else { return }
        let ring = Unmanaged<AudioRing>.fromOpaque(userdata).takeUnretainedValue()
        stream.withMemoryRebound(to: Float.self, capacity: Int(length) / 4) { floats in
            ring.pull(into: floats, count: Int(length) / 4)
        }
    }
}

/// Seconds on the monotonic clock.
func monotonicSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

extension WindowAudio {
    /// Opens the default sound device (48 kHz stereo asked, what it gives taken) and starts it pulling from a new
    /// ring; the error says the video runs on the system clock instead.
    static func open(
        _ api: FSSDLFunctions, trace: WindowTrace?
    ) -> Result<(WindowAudio, device: SDL_AudioDeviceID, ring: AudioRing), WindowError> {
        guard api.SDL_InitSubSystem(SDL_INIT_AUDIO) == 0 else {
            return .failure(WindowError("no audio device (\(api.lastError)): video runs on the system clock"))
        }
        var desired = SDL_AudioSpec()
        desired.freq = 48_000
        desired.format = SDL_AudioFormat(AUDIO_F32LSB)
        desired.channels = 2
        desired.samples = 1024
        let ring = AudioRing(trace: trace)
        desired.callback = AudioRing.callback
        desired.userdata = Unmanaged.passUnretained(ring).toOpaque()
        var obtained = SDL_AudioSpec()
        let changes = Int32(SDL_AUDIO_ALLOW_FREQUENCY_CHANGE | SDL_AUDIO_ALLOW_CHANNELS_CHANGE)
        let device = api.SDL_OpenAudioDevice(nil, 0, &desired, &obtained, changes)
        guard device != 0 else {
            let reason = api.lastError
            api.SDL_QuitSubSystem(SDL_INIT_AUDIO)
            return .failure(WindowError("no audio device (\(reason)): video runs on the system clock"))
        }
        let format = AudioFormat(sampleRate: Int(obtained.freq), channels: Int(obtained.channels))
        let output = WindowAudio(ring: ring, format: format, bufferFrames: Int(obtained.samples))
        trace?.record(
            .device(
                sampleRate: format.sampleRate, channels: format.channels, periodFrames: Int(obtained.samples),
                latency: output.deviceLatency))
        api.SDL_PauseAudioDevice(device, 0)
        return .success((output, device, ring))
    }
}
