/// The player's playback decisions as a value (SPEC 4.1–4.4): the state graph, the autoplay policy, the start and
/// resume thresholds, stalls, frame timing (with ``Playhead``) and the state timeouts. Every event is a `mutating
/// func` that takes the time (seconds on the player's injected clock, read by the executor) and returns the actions
/// to carry out, in order; it never does I/O and never reads a clock. What only one state needs lives in that state's
/// case of the private `State`, which changes in this file only.
struct PlaybackMachine: Sendable {
    /// Where the machine is, with what only that state needs.
    private enum State: Sendable {
        /// `idle`, `opening`, `ready`, `pausing`, `paused`, `ended`, `stopping` or `error`: nothing more to know.
        case settled(PlayerState)
        /// A seek waits for its target's first frame (shown as soon as it is decoded); since `since`.
        case seeking(since: Double)
        /// `play`: waiting for the start threshold, since `since`.
        case starting(since: Double)
        /// Filling the buffer: with `firstFrame`, a first frame is shown as soon as it is decoded (after a seek or a
        /// paused open); a `stall` during playback resumes at `minRebufferTime`.
        case buffering(firstFrame: Bool, stall: Bool)
        /// The playhead moves.
        case playing

        /// The state as the player publishes it.
        var published: PlayerState {
            switch self {
            case .settled(let state): state
            case .seeking: .seeking
            case .starting: .play
            case .buffering: .buffering
            case .playing: .playing
            }
        }
    }

    private var stage = State.settled(.idle)
    /// The settings (replaced by ``load(_:at:)``; the buffer thresholds by ``reconfigure(_:)``).
    var settings: Configuration
    /// The clock, the position, the rate and what is counted of them (the settings' events in
    /// `PlaybackMachine+Types.swift` change it too; the state changes in this file only).
    var playhead = Playhead()
    /// Whether playback should run (play was asked, and not paused since): kept across seeking and buffering.
    private(set) var wantsPlay = false
    /// Whether audio is muted by the player (a muted-only autoplay, or ``setMuted(_:)``).
    var muted = false
    /// Seconds the video output takes to put a frame on screen: frames are handed over that much early.
    var presentationDelay = 0.0
    private var timeouts: StateTimeoutController
    /// The buffer the first start waits for, when shorter than `minPrebufferTime` (cleared once playing).
    private(set) var startupBuffer: Double?

    init(settings: Configuration) {
        self.settings = settings
        timeouts = StateTimeoutController(configuration: settings.stateTimeouts)
    }

    /// The state, as published (a machine starts `idle`).
    var state: PlayerState { stage.published }

    /// `load`: from `idle` or `ended` to `opening`, with new settings and fresh statistics. The executor opens the
    /// source when the state is `opening` afterwards.
    mutating func load(_ settings: Configuration, at now: Double) -> [Action] {
        guard state.kind == .idle || state.kind == .ended else {
            return [refusal("load() needs an idle or ended player (it is \(state)); call stop() first")]
        }
        self.settings = settings
        timeouts = StateTimeoutController(configuration: settings.stateTimeouts)
        playhead.reset(openedAt: now)
        startupBuffer = nil
        return move(.settled(.opening), at: now)
    }

    /// The source is open: `ready`, with the duration (0 when unknown or live), the position to start from and,
    /// for an optimized live start, the buffer the first start waits for instead of `minPrebufferTime`.
    mutating func opened(duration: Double, start: Double = 0, startupBuffer: Double? = nil, at now: Double) -> [Action]
    {
        playhead.opened(duration: duration, start: start)
        self.startupBuffer = startupBuffer
        return move(.settled(.ready), at: now)
    }

    /// `open(autoplay:)`: with autoplay (and the policy's consent), `play`; without, the first frame is shown and the
    /// player waits paused.
    mutating func open(autoplay: Bool, at now: Double) -> [Action] {
        guard state.kind == .ready else {
            return [refusal("open() needs loaded content in the ready state (the player is \(state))")]
        }
        guard autoplay else {
            wantsPlay = false
            return showFirstFrameThenWait(at: now)
        }
        switch settings.autoplay {
        case .allowed:
            break
        case .mutedOnly:
            muted = true
        case .denied:
            wantsPlay = false
            let refused = PlayerError(
                .autoplayRefused, severity: .warning,
                "autoplay is denied by the player's autoplay policy; call play() to start")
            return move(.starting(since: now), at: now) + [.report(refused)] + move(.settled(.pausing), at: now)
                + showFirstFrameThenWait(at: now)
        }
        wantsPlay = true
        return move(.starting(since: now), at: now)
    }

    /// `play()`.
    mutating func play(at now: Double) -> [Action] {
        switch state.kind {
        case .ready, .paused, .pausing:
            wantsPlay = true
            return move(.starting(since: now), at: now)
        case .seeking, .buffering:
            // Playback starts once the seek or the first frame is done.
            wantsPlay = true
            return []
        case .ended:
            wantsPlay = true
            return seek(to: 0, at: now)
        default:
            return [refusal("play() is ignored in the \(state) state")]
        }
    }

    /// `pause()`.
    mutating func pause(at now: Double) -> [Action] {
        switch stage {
        case .seeking, .buffering(firstFrame: true, _):
            // The first frame is still to be shown; the player waits paused once it is.
            wantsPlay = false
            return []
        case .starting, .playing, .buffering:
            wantsPlay = false
            return move(.settled(.pausing), at: now) + move(.settled(.paused), at: now)
        case .settled(.ready):
            wantsPlay = false
            return move(.settled(.paused), at: now)
        default:
            return [refusal("pause() is ignored in the \(state) state")]
        }
    }

    /// A seek to `target` (already clamped by the executor to what may be played). `seeking` lasts until the
    /// target's first frame is decoded (``step(_:at:)``), then playback goes on as it was (`play` or `paused`).
    mutating func seek(to target: Double, at now: Double) -> [Action] {
        switch state.kind {
        case .ready, .play, .playing, .pausing, .paused, .buffering, .ended, .seeking:
            break
        default:
            return [refusal("seek() is ignored in the \(state) state")]
        }
        playhead.endStall(at: now)
        // A seek during a seek keeps its start: the grace before `buffering` runs from the first.
        let moved = state.kind == .seeking ? [] : move(.seeking(since: now), at: now)
        playhead.move(to: target)
        return moved + [.seekSource(target)]
    }

    /// `stop()`: releases the source and stays `stopping` until the executor says it is released
    /// (``released(at:)``); a release that lasts past the `stopping` timeout is reported, and still awaited.
    mutating func stop(at now: Double) -> [Action] {
        guard state.kind != .idle, state.kind != .stopping else { return [] }
        wantsPlay = false
        playhead.endStall(at: now)
        return move(.settled(.stopping), at: now) + [.release]
    }

    /// The source is released (its decoder threads have ended): `stopping` -> `idle`.
    mutating func released(at now: Double) -> [Action] {
        guard state.kind == .stopping else { return [] }
        return move(.settled(.idle), at: now)
    }

    /// A fatal error: the source is released and the player moves to `error` (once).
    mutating func fail(_ error: PlayerError, at now: Double) -> [Action] {
        guard state.kind != .error else { return [] }
        wantsPlay = false
        playhead.endStall(at: now)
        return [.report(error)] + move(.settled(.error(error)), at: now) + [.release]
    }

    /// One step of playback: what to do with the buffers as they are at `now`.
    mutating func step(_ buffer: Buffer, at now: Double) -> [Action] {
        var actions: [Action] = []
        if let timeout = timeouts.check(at: now) { actions.append(.report(timeout)) }
        if publishesStatistics, playhead.statisticsDue(at: now) {
            actions.append(.publishStatistics)
        }
        switch stage {
        case .seeking(let since): actions += seeking(buffer, since: since, at: now)
        case .starting(let since): actions += starting(buffer, since: since, at: now)
        case .buffering(let firstFrame, let stall):
            actions += buffering(buffer, firstFrame: firstFrame, stall: stall, at: now)
        case .playing: actions += playing(buffer, at: now)
        // Stopping ends when the decoder threads have (each tells the executor); other states change with a command,
        // with what the buffers hold (a live window that moves) or at a deadline.
        default: actions.append(.awaitBuffer(until: timed()))
        }
        return actions
    }

    /// After a seek: the target's first frame is shown, then playback goes on as it was; without one in
    /// ``seekGrace``, `buffering` shows it when it comes.
    private mutating func seeking(_ buffer: Buffer, since: Double, at now: Double) -> [Action] {
        if let frame = buffer.frame {
            let shown = present(frame, at: now)
            if wantsPlay { return shown + move(.starting(since: now), at: now) }
            return shown + move(.settled(.pausing), at: now) + move(.settled(.paused), at: now)
        }
        if buffer.ended {
            wantsPlay = false
            return move(.settled(.ended), at: now)
        }
        guard now >= since + Self.seekGrace else {
            return [.awaitBuffer(until: timed(since + Self.seekGrace))]
        }
        return move(.buffering(firstFrame: true, stall: false), at: now)
    }

    /// The first of `deadline` and what the clock alone brings while the buffers stay as they are: the state's
    /// timeout and the next statistics (in the states that publish them: in the others the last publication's
    /// second would be a deadline long past, and the executor would never wait).
    private func timed(_ deadline: Double = .infinity) -> Double {
        let statistics = publishesStatistics ? playhead.nextStatistics : .infinity
        return min(deadline, timeouts.deadline ?? .infinity, statistics.isFinite ? statistics : .infinity)
    }

    /// Whether statistics are published once a second in the current state: not while idle, opening or stopping
    /// (the source is absent or being released, and its counts with it).
    private var publishesStatistics: Bool { ![.idle, .opening, .stopping].contains(state.kind) }

    /// In `play`: start once the start threshold is buffered (or the rest of the content is); else, after
    /// ``startGrace``, `buffering`.
    private mutating func starting(_ buffer: Buffer, since: Double, at now: Double) -> [Action] {
        let threshold = threshold(rebuffering: false)
        if buffer.seconds >= threshold || buffer.complete {
            startupBuffer = nil
            playhead.endStall(at: now)
            playhead.start(at: now)
            return move(.playing, at: now)
        }
        guard now >= since + Self.startGrace else {
            return [.awaitBuffer(until: timed(since + Self.startGrace))]
        }
        return move(.buffering(firstFrame: false, stall: false), at: now)
    }

    /// In `buffering`: show a pending first frame, then wait for the threshold and go on playing or paused.
    private mutating func buffering(_ buffer: Buffer, firstFrame: Bool, stall: Bool, at now: Double) -> [Action] {
        var actions: [Action] = []
        if firstFrame {
            if let frame = buffer.frame {
                actions += present(frame, at: now)
            } else if !buffer.ended {
                return [.awaitBuffer(until: timed())]
            }
            stage = .buffering(firstFrame: false, stall: stall)
        }
        let threshold = threshold(rebuffering: stall)
        guard buffer.seconds >= threshold || buffer.complete else {
            return actions + [.awaitBuffer(until: timed())]
        }
        playhead.endStall(at: now)
        return actions + move(wantsPlay ? .starting(since: now) : .settled(.paused), at: now)
    }

    private mutating func playing(_ buffer: Buffer, at now: Double) -> [Action] {
        guard playhead.clock.rate != 0 else { return [.wait(until: now + 0.1)] }
        switch playhead.next(frame: buffer.frame, ended: buffer.ended, at: now, lead: presentationDelay) {
        case .wait(let until): return [.wait(until: until)]
        case .present(let frame): return present(frame, at: now)
        case .drop: return [.drop]
        case .reachedStart(let start):
            wantsPlay = false
            let moved = move(.settled(.pausing), at: now) + move(.settled(.paused), at: now)
            playhead.move(to: start)
            return moved + [.clockChanged]
        case .reachedEnd:
            wantsPlay = false
            let moved = move(.settled(.ended), at: now)
            if playhead.clock.duration > 0 { playhead.move(to: playhead.clock.duration) }
            return moved
        case .starved:
            return [.starved] + move(.buffering(firstFrame: false, stall: true), at: now)
        }
    }

    mutating func showFirstFrameThenWait(at now: Double) -> [Action] {
        move(.buffering(firstFrame: true, stall: false), at: now)
    }

    private mutating func present(_ frame: Double, at now: Double) -> [Action] {
        playhead.present(frame, at: now)
        return [.present]
    }

    /// Moves to `next` if the state graph allows it (``PlayerStateMachine``), else reports the refusal.
    private mutating func move(_ next: State, at now: Double) -> [Action] {
        var graph = PlayerStateMachine(state: state)
        switch graph.move(to: next.published) {
        case .moved(let previous, let current):
            stage = next
            timeouts.enter(current.kind, at: now)
            playhead.setRunning(current.kind == .playing, at: now)
            // Statistics as of the change, so the last ones after `ended`, `paused` or `error` are complete (while
            // playing they come every second; before opening and when idle there are none).
            let statistics = ![.playing, .opening, .idle].contains(current.kind)
            if statistics { playhead.statisticsPublished(at: now) }
            return [.changed(previous: previous, current: current, statistics: statistics)]
        case .refused(let warning):
            return [.report(warning)]
        }
    }
}
