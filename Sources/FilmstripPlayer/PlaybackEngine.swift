import FilmstripImaging
import FilmstripLoading
import FilmstripMedia
import Foundation

/// The executor behind ``Player``: runs on the player's thread, hands commands and what the buffers hold to the
/// ``PlaybackMachine``, and carries out its actions (seek the source, present or drop a frame, release, publish
/// state, clock and statistics, wait). Sources are opened and followed in `PlaybackEngine+Source.swift`.
struct PlaybackEngine {
    var machine = PlaybackMachine(settings: PlaybackMachine.Configuration())
    let clock: SessionClock
    var configuration: PlayerConfiguration?
    /// The feeders: the one frames come from, trick play's, those stopped.
    var frames = FrameSupply()
    var feeder: FrameFeeder? { frames.feeder }
    /// The next decoded frame, taken from the feeder and not yet presented or dropped.
    var pending: PlayerFrame?
    var stream: StreamSession?
    var live: LiveEdgeController?
    var isLive = false
    /// Whether the loaded file has no video (its audio alone places the frames).
    var fileAudioOnly = false
    /// The loaded file's audio streams, when it has more than one, and the one playing.
    var fileAudio = FileAudioStreams()
    var window: ClosedRange<Double>?
    /// File and progressive decoders this player created (content with the codec parameters of the previous one
    /// reuses its decoder).
    var decodersCreated = 0
    /// An optimized live start's saving, estimated at its first frame.
    var startupSaving: StartupSaving?
    /// The sound: its renderer, a start's wait for audio, the picture's distance from it.
    var sound = EngineSound(output: nil)
    /// How a file or progressive source was opened (trick play opens it again for its own decoder).
    var fileOptions: FrameExtractorConfiguration?
    /// The producers' change count (``Player/bufferEvents``) when this step began to look at the buffers.
    var bufferMark = 0

    init(clock: SessionClock) {
        self.clock = clock
    }

    /// Seconds on the injected clock.
    var now: Double { clock.now().seconds }

    mutating func run(_ player: () -> Player?) {
        while let player = player() {
            if player.shared.withLock({ $0.shutdown }) { break }
            // One at a time: a command may take a while (opening), and a stop() meanwhile withdraws those queued
            // after it. While stopping, commands wait for the release (a load() after a stop() finds an idle player).
            while machine.state.kind != .stopping,
                let command = player.shared.withLock({ $0.commands.isEmpty ? nil : $0.commands.removeFirst() })
            {
                handle(command, player)
            }
            step(player)
        }
        release()
    }

    // MARK: Commands

    private mutating func handle(_ command: Player.Command, _ player: Player) {
        switch command {
        case .load(let configuration, let autoplay):
            load(player.shared.withLock { $0.overrides }.applied(to: configuration), player)
            if let autoplay, machine.state.kind == .ready {
                handle(.open(autoplay: autoplay), player)
            }
        case .open(let autoplay):
            let wasMuted = machine.muted
            execute(machine.open(autoplay: autoplay, at: now), player)
            // A muted-only autoplay mutes the player.
            if machine.muted, !wasMuted { player.shared.withLock { $0.muted = true } }
        case .play:
            execute(machine.play(at: now), player)
        case .pause:
            execute(machine.pause(at: now), player)
        case .seek(let seconds):
            seek(to: seconds, player, byUser: true)
        case .rate(let requested):
            let resolved = player.ratePolicy.resolve(requested)
            if let warning = resolved.warning { player.deliver(warning) }
            player.shared.withLock { $0.rate = resolved.rate }
            changeRate(to: resolved.rate, player)
        case .mute(let muted):
            machine.setMuted(muted)
            player.shared.withLock { $0.muted = muted }
        case .selectAudio(let index):
            selectAudio(index, player)
        case .reconfigure:
            guard let loaded = configuration else { return }
            let updated = player.shared.withLock { $0.overrides }.applied(to: loaded)
            configuration = updated
            machine.reconfigure(PlaybackMachine.Configuration(updated))
            live?.reconfigure(updated.live)
            if let stream {
                stream.setMaxBuffer(updated.maxPrebufferTime)
            } else {
                feeder?.setCapacity(updated.maxPrebufferTime)
            }
        case .stop:
            execute(machine.stop(at: now), player)
        }
    }

    /// A seek, clamped to the content (live: to the window; a user's seek also tells the live-edge controller).
    mutating func seek(to requested: Double, _ player: Player, byUser: Bool) {
        let duration = machine.clock.duration
        var target = min(max(0, requested), duration > 0 ? duration : requested)
        if isLive, let window {
            target = min(max(requested, window.lowerBound), window.upperBound)
            if byUser, let decision = live?.userSought(to: target, window: window), decision != .none {
                execute(machine.setCatchUp(1, at: now), player)
            }
        }
        execute(machine.seek(to: target, at: now), player)
    }

    // MARK: Steps

    private mutating func step(_ player: Player) {
        bufferMark = player.bufferEvents.withLock { $0.count }
        if frames.released(), machine.state.kind == .stopping {
            execute(machine.released(at: now), player)
        }
        if stream != nil { followStream(player) }
        renderAudio(player)
        guard let buffer = observe(player) else { return }
        // Read outside the player's lock: an output's delay may take its own lock, or read the player.
        let output = player.shared.withLock { $0.callbacks.output }
        let delay = output?.presentationDelay ?? 0
        machine.presentationDelay = delay.isFinite ? min(max(delay, 0), 0.1) : 0
        execute(machine.step(buffer, at: now), player)
    }

    /// What the buffers hold: takes the next decoded frame into `pending` when there is none. `nil` after a
    /// decoder failure (the player is then in `error`).
    private mutating func observe(_ player: Player) -> PlaybackMachine.Buffer? {
        guard let feeder else { return PlaybackMachine.Buffer(frame: nil) }
        if pending == nil {
            switch feeder.take() {
            case .frame(let frame): pending = frame
            case .empty, .ended: break
            case .failed(let error):
                fail(error, player)
                return nil
            }
        }
        let position = pending?.time ?? machine.currentTime(at: now)
        if sound.awaits(position, from: feeder, at: now) {
            return PlaybackMachine.Buffer(frame: pending?.time, seconds: 0)
        }
        return frames.buffer(next: pending?.time, at: position, stream: stream)
    }

    // MARK: Actions

    mutating func execute(_ actions: [PlaybackMachine.Action], _ player: Player) {
        for action in actions {
            switch action {
            case .changed(let previous, let current, let withStatistics):
                let clock = machine.publishedClock
                let stats = withStatistics ? statistics() : nil
                // Whoever sees the new state already reads the statistics that come with it.
                let callbacks = player.shared.withLock { shared in
                    shared.state = current
                    shared.clock = clock
                    if let stats { shared.stats = stats }
                    // A stopped player has no statistics until the next content's first (getStats() is nil).
                    if current.kind == .idle { shared.stats = nil }
                    return (shared.callbacks.onState, shared.callbacks.onStats)
                }
                callbacks.0?(previous, current)
                if let stats { callbacks.1?(stats) }
            case .report(let error):
                player.deliver(error)
            case .seekSource(let time):
                pending = nil
                sound.flush()
                seekSource(to: time)
            case .present:
                present(player)
            case .drop:
                pending = nil
            case .starved:
                stream?.markStarvation()
            case .release:
                release()
            case .publishStatistics:
                publishStatistics(player)
            case .clockChanged:
                let clock = machine.publishedClock
                player.shared.withLock { $0.clock = clock }
            case .wait(let deadline):
                // While audio plays to an output with a device buffer, it is handed over every audio period; an
                // output without one (a file) gets it at each step, up to the clock.
                let feeding = sound.feedsDevice && machine.state.kind == .playing
                let until = feeding ? min(deadline, now + AudioRenderer.period) : deadline
                player.engineSleep(for: until - now, stopping: machine.state.kind == .stopping)
            case .awaitBuffer(let deadline):
                awaitBuffer(player, until: deadline)
            }
        }
    }

    /// Positions the source at `time`: a stream's fetch restarts at the segment holding it (trick play fetches on
    /// its own), then the feeder's decoder follows. The decoder thread only carries out its own part.
    mutating func seekSource(to time: Double) {
        var token: StreamSession.ReadToken?
        if frames.trick == nil, let stream {
            // The audio lane drops the runs queued so far before the fetch restarts (runs queued after are kept).
            feeder?.restartAudio()
            token = stream.seek(to: time)
        }
        feeder?.seek(to: time, after: token)
    }

    private mutating func present(_ player: Player) {
        guard let frame = pending else { return }
        pending = nil
        // Audio-only content: the frame marks decoded audio; there is no picture to show or to measure drift by.
        guard let picture = frame.picture else { return }
        sound.measure(frame: frame.time, rate: machine.clock.rate, expectsAudio: feeder?.expectsAudio == true)
        player.shared.withLock { $0.callbacks.output }?.show(picture, at: frame.time)
    }

    mutating func release() {
        sound.flush()
        frames.release()
        stream?.stop()
        stream = nil
        fileAudioOnly = false
        fileAudio = FileAudioStreams()
        pending = nil
    }

    /// Waits until the buffers change, a command arrives, `deadline` passes, or a start waiting for its audio gives
    /// up.
    private func awaitBuffer(_ player: Player, until deadline: Double) {
        var deadline = min(deadline, now + Self.longestWait)
        if let giveUp = sound.waitDeadline { deadline = min(deadline, giveUp) }
        player.awaitBufferChange(since: bufferMark, for: deadline - now, stopping: machine.state.kind == .stopping)
    }

    /// Hands the audio due to the output (reporting audio that cannot be decoded, once per content), and keeps the
    /// playback clock on the audio clock while the output holds audio unheard.
    private mutating func renderAudio(_ player: Player) {
        guard let feeder else { return }
        if let problem = sound.newProblem(of: feeder) {
            player.deliver(
                PlayerError(
                    .audioUnavailable, severity: .warning, "the audio cannot be played: \(problem.message)",
                    underlying: problem))
        }
        let volume = player.shared.withLock { $0.volume }
        if let heard = sound.render(feeder, machine: machine, at: now, volume: volume) {
            execute(machine.follow(audioClock: heard, at: now), player)
        }
    }

    /// The longest the engine waits for anything: a safety net, as every wait has an event or a deadline that ends
    /// it sooner.
    static let longestWait = 60.0

    /// A decoder or source failure: fatal, with the cause kept. A file or progressive source whose server cannot be
    /// reached also reports the lost connectivity first, as a stream's requests do.
    mutating func fail(_ error: any Error, _ player: Player) {
        if let loading = (error as? MediaError)?.underlying as? LoadingError,
            loading.kind == .transport || loading.kind == .timedOut
        {
            player.deliver(
                PlayerError(
                    .internetConnectionUnavailable, severity: .warning, "the server cannot be reached: \(loading)",
                    underlying: loading))
        }
        execute(machine.fail(PlayerError(failure: error), at: now), player)
    }
}
