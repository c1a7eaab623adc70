import FilmstripMedia
import Foundation

/// The sound: audio handed to the output as the clock reaches it, the picture kept on the audio clock, and a start
/// that waits for its first moments of audio.
extension PlaybackEngine {
    /// Hands the audio due by the playback clock to the output; with an output that holds audio unheard, keeps the
    /// playback clock on the audio clock. Reports audio that cannot be decoded, once per content.
    mutating func renderAudio(_ player: Player) {
        guard var renderer = audio, let feeder else { return }
        if !audioChecked, let problem = feeder.audioProblem {
            audioChecked = true
            player.deliver(
                PlayerError(
                    .audioUnavailable, severity: .warning, "the audio cannot be played: \(problem.message)",
                    underlying: problem))
        }
        renderer.volume = player.shared.withLock { $0.volume }
        audio = renderer
        let rate = machine.clock.rate
        if machine.state.kind == .ended, rate > 0 {
            // The audio up to the end, once.
            renderer.finish(at: machine.clock.time(at: now), rate: rate, muted: machine.muted) {
                feeder.takeAudio(before: $0)
            }
            audio = renderer
            return
        }
        guard machine.state.kind == .playing, machine.clock.running else { return }
        let time = machine.currentTime(at: now)
        // Ahead of the clock in the direction of play: the output's lead (wall seconds; at rates above 1 they hold
        // more media), and what a tempo filter holds besides (it gives out only what it was fed beyond that).
        let outputLead = max(0, min(1, renderer.output.preferredLead)) * max(1, abs(rate))
        let lead = (outputLead + renderer.heldInTempo) * (rate < 0 ? -1 : 1)
        renderer.render(until: time + lead, start: machine.clock.media, rate: rate, muted: machine.muted) {
            feeder.takeAudio(before: $0)
        }
        audio = renderer
        // Content without audio runs on the system clock (the silence that keeps an output's time is not a clock).
        if rate > 0, feeder.expectsAudio, renderer.output.latency > 0, let cursor = renderer.cursor,
            cursor >= time + lead - 0.002,
            let heard = renderer.heard(rate: rate)
        {
            execute(machine.follow(audioClock: heard, at: now), player)
        }
    }

    /// Whether a start (after a load or a seek) still waits for the audio of its first moments: with audio expected,
    /// playback starts once it is decoded, so the sound begins with the picture.
    mutating func awaitsAudio(for time: Double, _ feeder: FrameFeeder) -> Bool {
        guard let audio, audio.cursor == nil, !audioWait.over, feeder.expectsAudio, !feeder.reachedEnd,
            feeder.audioProblem == nil
        else {
            return false
        }
        if feeder.audioQueued(after: time) >= 0.1 {
            audioWait = (nil, true)
            return false
        }
        let since = audioWait.since ?? now
        audioWait.since = since
        if now - since >= Self.audioStartWait { audioWait = (nil, true) }
        return !audioWait.over
    }
}
