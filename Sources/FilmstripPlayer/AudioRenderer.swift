import FilmstripMedia

/// Hands decoded audio to an ``AudioOutput`` as the playback clock reaches it, and keeps the audio clock.
///
/// A value the engine owns (its thread only). Media time is covered without gaps or overlaps from where playback
/// starts: queued PCM at its own time (trimmed to the cursor), silence where the queue has a hole, and, while muted
/// or at rates outside 0...2 (and very slow rates, below 1/16), silence as long as the wall-clock time played
/// (counted in ``silence``). At other rates than 1 the PCM goes through a tempo filter that keeps the pitch.
struct AudioRenderer {
    /// Rates between these keep their audio (pitch kept); outside, audio is muted.
    static let audibleRates = AudioTempo.rates
    /// A hole in the audio longer than this (media seconds) behind the clock is filled with silence.
    static let holeTolerance = 0.25

    let output: any AudioOutput
    let format: AudioFormat
    /// Media time up to which audio was handed over; `nil` until playback starts (after a load or a seek).
    private(set) var cursor: Double?
    /// Seconds of output handed over (wall-clock length), and how much of it was silence for a mute or a rate.
    private(set) var played = 0.0
    private(set) var silence = 0.0
    private var tempo: AudioTempo?
    /// The gain applied to what is handed over (``Player/volume``).
    var volume = 1.0
    /// Audio taken from the decoder and not yet due.
    private var held: [AudioBuffer] = []
    /// How often the engine hands audio over while playing (seconds): the audio clock's granularity.
    static let period = 0.01

    init(output: any AudioOutput) {
        self.output = output
        format = output.format
    }

    /// A seek, a stop or new content: what the output holds is dropped; the next render starts at its `start`.
    mutating func flush() {
        cursor = nil
        tempo = nil
        held = []
        output.flush()
    }

    /// Drops the audio taken and not yet due (another track plays); the cursor stays.
    mutating func dropHeld() {
        held = []
    }

    /// Media seconds a tempo filter was fed and has not given out yet (0 without one).
    var heldInTempo: Double {
        guard let cursor, let emitted = tempo?.emittedUntil else { return 0 }
        return max(0, cursor - emitted)
    }

    /// The media time the listener hears: what was handed over (up to the playback clock, see ``render``), less
    /// what the output holds unheard; `nil` before playback starts. Through a tempo filter, half of what the filter
    /// holds counts as not handed over: its output at any moment blends the input of the window it works on, whose
    /// middle is about half-way back (measured through a capture of the device: counting none of it put the sound
    /// 25 to 40 ms late at rates 0.5, 1.5 and 2 against rate 1, counting all of it 42 ms early at 0.5).
    func heard(rate: Double) -> Double? {
        guard let cursor else { return nil }
        return cursor - heldInTempo / 2 - output.latency * max(0, rate)
    }

    /// Hands over the audio due by media time `time`: queued PCM from `take` (cut at `time`, the rest kept for the
    /// next call), or silence while `muted` or at a rate outside ``audibleRates``. `start` is where playback
    /// (re)started, used on the first call after a flush.
    mutating func render(
        until time: Double, start: Double, rate: Double, muted: Bool,
        take: (Double) -> [AudioBuffer]
    ) {
        var cursor = self.cursor ?? start
        defer { self.cursor = cursor }
        if rate < 0 {
            // Backwards: silence as long as the span takes to play; nothing decoded is played in reverse.
            held = []
            if time < cursor {
                emitSilence(at: time, seconds: (cursor - time) / -rate, counted: true)
                cursor = time
            }
            return
        }
        held += take(time)
        guard time > cursor else { return }
        let audible = !muted && rate > 0 && Self.audibleRates.contains(rate)
        guard audible else {
            // The media time passes in silence as long as it takes to play; the PCM it covered is dropped.
            held = held.compactMap { $0.trimmed(from: time) }
            emitSilence(at: cursor, seconds: (time - cursor) / max(rate, 1e-9), counted: true)
            cursor = time
            return
        }
        var pieces: [AudioBuffer] = []
        while let first = held.first, first.time < time {
            held.removeFirst()
            guard let piece = first.trimmed(from: cursor) else { continue }
            if piece.time > cursor + 0.002 {
                pieces.append(.silence(format, time: cursor, seconds: piece.time - cursor))
            }
            guard piece.end > time else {
                pieces.append(piece)
                cursor = piece.end
                continue
            }
            // The part after the clock waits for its time.
            if let now = piece.trimmed(from: piece.time, to: time) { pieces.append(now) }
            if let later = piece.trimmed(from: time) { held.insert(later, at: 0) }
            cursor = time
            break
        }
        if cursor < time - Self.holeTolerance {
            // No audio for this span (the track ended, or a segment of it is missing): silence keeps time going.
            pieces.append(.silence(format, time: cursor, seconds: time - cursor))
            cursor = time
        }
        for piece in pieces { emit(piece, rate: rate) }
    }

    /// Playback reached the end at `end`: the audio up to it, and what a tempo filter still holds.
    mutating func finish(at end: Double, rate: Double, muted: Bool, take: (Double) -> [AudioBuffer]) {
        if let cursor, end > cursor { render(until: end, start: cursor, rate: rate, muted: muted, take: take) }
        if let rest = tempo?.drain() { hand(rest) }
        tempo = nil
    }

    private mutating func emit(_ buffer: AudioBuffer, rate: Double) {
        guard abs(rate - 1) > 1e-6 else {
            tempo = nil
            hand(buffer)
            return
        }
        if tempo?.rate != rate { tempo = AudioTempo(format: format, rate: rate) }
        guard let stretched = tempo?.process(buffer) else {
            // No tempo filter: silence as long as the span takes at this rate (never sped-up pitch).
            emitSilence(at: buffer.time, seconds: buffer.duration / rate, counted: true)
            return
        }
        hand(stretched)
    }

    /// Plays `buffer` on the output and counts it.
    private mutating func hand(_ buffer: AudioBuffer, silence counted: Bool = false) {
        guard buffer.frameCount > 0 else { return }
        if volume < 1, !counted {
            var scaled = buffer
            let gain = Float(volume)
            for i in scaled.samples.indices { scaled.samples[i] *= gain }
            output.play(scaled)
        } else {
            output.play(buffer)
        }
        played += buffer.duration
        if counted { silence += buffer.duration }
    }

    private mutating func emitSilence(at time: Double, seconds: Double, counted: Bool) {
        hand(.silence(format, time: time, seconds: seconds), silence: counted)
    }
}
