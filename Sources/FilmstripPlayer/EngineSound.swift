import FilmstripMedia
import Foundation

/// The engine's sound: the renderer that hands the content's audio to the output (when one is attached), whether the
/// audio's decoding problem was reported, a start's wait for its first audio, and how far the picture is from the
/// sound.
struct EngineSound {
    /// The renderer, made at load for the attached output.
    private(set) var renderer: AudioRenderer?
    private var reported = false
    /// Since when (clock seconds) a start waits for its audio; over once audio comes or after ``startWait`` (the
    /// content then plays with what audio it has).
    private var wait: (since: Double?, over: Bool) = (nil, false)
    /// The picture's distance from the sound at the last frame shown, and the largest.
    private(set) var drift: (last: Double?, largest: Double?)
    static let startWait = 8.0

    /// The sound of new content, heard through `output`.
    init(output: (any AudioOutput)?) { renderer = output.map(AudioRenderer.init) }

    /// The format the decoders give audio in, when an output hears it.
    var format: AudioFormat? { renderer?.format }

    /// Whether audio is handed to an output with a device buffer (it is fed every audio period).
    var feedsDevice: Bool { renderer.map { $0.output.latency > 0 || $0.output.preferredLead > 0 } ?? false }

    /// A seek or a release: what the renderer held is dropped, and a start waits for audio again.
    mutating func flush() {
        renderer?.flush()
        wait = (nil, false)
    }

    /// Another audio track plays: what the renderer held of the previous one is dropped.
    mutating func dropHeld() { renderer?.dropHeld() }

    /// The feeder's audio problem, the first time it is seen.
    mutating func newProblem(of feeder: FrameFeeder) -> MediaError? {
        guard renderer != nil, !reported, let problem = feeder.audioProblem else { return nil }
        reported = true
        return problem
    }

    /// Hands the audio due by `machine`'s clock to the output (up to the end, once, when ended); returns the audio
    /// clock the playback clock should follow, when the output holds audio unheard.
    mutating func render(
        _ feeder: FrameFeeder, machine: PlaybackMachine, at now: Double, volume: Double
    ) -> Double? {
        guard var renderer else { return nil }
        defer { self.renderer = renderer }
        renderer.volume = volume
        let rate = machine.clock.rate
        if machine.state.kind == .ended, rate > 0 {
            renderer.finish(at: machine.clock.time(at: now), rate: rate, muted: machine.muted) {
                feeder.takeAudio(before: $0)
            }
            return nil
        }
        guard machine.state.kind == .playing, machine.clock.running else { return nil }
        let time = machine.currentTime(at: now)
        // Ahead of the clock in the direction of play: the output's lead (wall seconds; at rates above 1 they hold
        // more media), and what a tempo filter holds besides (it gives out only what it was fed beyond that).
        let outputLead = max(0, min(1, renderer.output.preferredLead)) * max(1, abs(rate))
        let lead = (outputLead + renderer.heldInTempo) * (rate < 0 ? -1 : 1)
        renderer.render(until: time + lead, start: machine.clock.media, rate: rate, muted: machine.muted) {
            feeder.takeAudio(before: $0)
        }
        // Content without audio runs on the system clock (the silence that keeps an output's time is not a clock).
        guard rate > 0, feeder.expectsAudio, renderer.output.latency > 0, let cursor = renderer.cursor,
            cursor >= time + lead - 0.002
        else { return nil }
        return renderer.heard(rate: rate)
    }

    /// Whether a start (after a load or a seek) still waits for the audio of its first moments: with audio expected,
    /// playback starts once it is decoded, so the sound begins with the picture.
    mutating func awaits(_ time: Double, from feeder: FrameFeeder, at now: Double) -> Bool {
        guard let renderer, renderer.cursor == nil, !wait.over, feeder.expectsAudio, !feeder.reachedEnd,
            feeder.audioProblem == nil
        else {
            return false
        }
        if feeder.audioQueued(after: time) >= 0.1 {
            wait = (nil, true)
            return false
        }
        let since = wait.since ?? now
        wait.since = since
        if now >= since + Self.startWait { wait = (nil, true) }
        return !wait.over
    }

    /// When a start waiting for its audio gives up, if one waits.
    var waitDeadline: Double? { wait.over ? nil : wait.since.map { $0 + Self.startWait } }

    /// Measures the picture's distance from the sound as a frame of `time` is shown.
    mutating func measure(frame time: Double, rate: Double, expectsAudio: Bool) {
        guard expectsAudio, let heard = renderer?.heard(rate: rate) else { return }
        let distance = time - heard
        drift.last = distance
        if abs(distance) > abs(drift.largest ?? 0) { drift.largest = distance }
    }

    /// What the sound adds to the statistics.
    func fill(_ stats: inout PlayerStats) {
        guard let renderer else { return }
        stats.audioPlayed = renderer.played
        stats.audioSilence = renderer.silence
        stats.avDrift = drift.last
        stats.maxAVDrift = drift.largest
    }
}
