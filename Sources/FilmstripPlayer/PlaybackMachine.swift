/// The player's playback decisions as a value (SPEC 4.1–4.4): the state graph, the autoplay policy, the start and
/// resume thresholds, stalls, frame timing (present, wait or drop), the playback clock and the state timeouts.
///
/// Every event is a `mutating func` that takes the time (seconds on the player's injected clock) and returns the
/// actions for an executor to carry out; the machine never does I/O and never reads a clock. The executor tells it
/// what the buffers hold (``Buffer``) once per step.
///
/// ```swift
/// var machine = PlaybackMachine(settings: .init(configuration))
/// execute(machine.load(settings, at: now))     // -> opening
/// execute(machine.opened(duration: 60, at: now))
/// execute(machine.open(autoplay: true, at: now))
/// while running { execute(machine.step(buffer, at: clock.now)) }
/// ```
public struct PlaybackMachine: Sendable {
    /// The settings (replaced by ``load(_:at:)``).
    public private(set) var settings: Settings
    /// The state graph.
    public private(set) var states = PlayerStateMachine()
    /// The playback clock (see ``publishedClock`` for the playhead it shows).
    public private(set) var clock = PlaybackClock()
    /// Whether playback should run (play was asked, and not paused since).
    public private(set) var wantsPlay = false
    /// Whether audio is muted by the player (a muted-only autoplay, or ``setMuted(_:)``).
    public private(set) var muted = false
    /// The playback rate asked for (the clock runs at this times ``catchUp``).
    public private(set) var rate = 1.0
    /// The live catch-up factor (1 unless speeding up to the live edge).
    public private(set) var catchUp = 1.0

    private var timeouts: StateTimeoutController
    private(set) var position = 0.0
    /// After a seek or a paused open: the first frame is shown as soon as it is decoded.
    private var needsFirstFrame = false
    /// Whether the current buffering is a stall during playback (resumed at `minRebufferTime`).
    private var rebuffering = false
    private var entered = 0.0
    /// The buffer the first start waits for, when shorter than `minPrebufferTime` (cleared once playing).
    private var startupBuffer: Double?
    private var hasPresentedSinceAnchor = false
    private(set) var counters = Counters()

    /// A machine in `idle`.
    public init(settings: Settings) {
        self.settings = settings
        timeouts = StateTimeoutController(configuration: settings.stateTimeouts)
    }

    /// The state.
    public var state: PlayerState { states.state }

    // MARK: Commands

    /// `load`: from `idle` or `ended` to `opening`, with new settings and fresh statistics. The executor opens the
    /// source when the state is `opening` afterwards.
    public mutating func load(_ settings: Settings, at now: Double) -> [Action] {
        guard state.kind == .idle || state.kind == .ended else {
            return [refusal("load() needs an idle or ended player (it is \(state)); call stop() first")]
        }
        self.settings = settings
        timeouts = StateTimeoutController(configuration: settings.stateTimeouts)
        counters = Counters()
        counters.openedAt = now
        position = 0
        catchUp = 1
        clock = PlaybackClock()
        clock.rate = rate
        needsFirstFrame = false
        rebuffering = false
        startupBuffer = nil
        return move(.opening, at: now)
    }

    /// The source is open: `ready`, with the duration (0 when unknown or live), the position to start from and,
    /// for an optimized live start, the buffer the first start waits for instead of `minPrebufferTime`.
    public mutating func opened(
        duration: Double, start: Double = 0, startupBuffer: Double? = nil, at now: Double
    ) -> [Action] {
        clock.duration = duration
        position = start
        self.startupBuffer = startupBuffer
        return move(.ready, at: now)
    }

    /// `open(autoplay:)`: with autoplay (and the policy's consent), `play`; without, the first frame is shown and the
    /// player waits paused.
    public mutating func open(autoplay: Bool, at now: Double) -> [Action] {
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
            return move(.play, at: now) + [.report(refused)] + move(.pausing, at: now)
                + showFirstFrameThenWait(at: now)
        }
        wantsPlay = true
        return move(.play, at: now)
    }

    /// `play()`.
    public mutating func play(at now: Double) -> [Action] {
        switch state.kind {
        case .ready, .paused, .pausing:
            wantsPlay = true
            return move(.play, at: now)
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
    public mutating func pause(at now: Double) -> [Action] {
        switch state.kind {
        case .seeking:
            // The target's first frame is still to be shown; the player waits paused once it is.
            wantsPlay = false
            return []
        case .buffering where needsFirstFrame:
            wantsPlay = false
            return []
        case .play, .playing, .buffering:
            wantsPlay = false
            return move(.pausing, at: now) + move(.paused, at: now)
        case .ready:
            wantsPlay = false
            return move(.paused, at: now)
        default:
            return [refusal("pause() is ignored in the \(state) state")]
        }
    }

    /// A seek to `target` (already clamped by the executor to what may be played). `seeking` lasts until the
    /// target's first frame is decoded (``step(_:at:)``), then playback goes on as it was (`play` or `paused`).
    public mutating func seek(to target: Double, at now: Double) -> [Action] {
        switch state.kind {
        case .ready, .play, .playing, .pausing, .paused, .buffering, .ended, .seeking:
            break
        default:
            return [refusal("seek() is ignored in the \(state) state")]
        }
        needsFirstFrame = true
        rebuffering = false
        endStall(at: now)
        let moved = state.kind == .seeking ? [] : move(.seeking, at: now)
        position = target
        return moved + [.seekSource(target)]
    }

    /// A new playback rate (already resolved by the engine's rate policy).
    public mutating func setRate(_ rate: Double, at now: Double) -> [Action] {
        self.rate = rate
        return reanchor(at: now)
    }

    /// The live catch-up factor (1 stops catching up).
    public mutating func setCatchUp(_ factor: Double, at now: Double) -> [Action] {
        catchUp = factor
        return reanchor(at: now)
    }

    /// New buffer settings (``Player/minPrebufferTime`` and the like) from now on.
    public mutating func reconfigure(_ settings: Settings) {
        self.settings.minPrebufferTime = settings.minPrebufferTime
        self.settings.minRebufferTime = settings.minRebufferTime
        self.settings.maxPrebufferTime = settings.maxPrebufferTime
    }

    /// The content's duration, once a stream learns it.
    public mutating func setDuration(_ duration: Double) { clock.duration = duration }

    /// The start of what may be played (a live window's first segment; 0 by default): reverse playback pauses there.
    public mutating func setStart(_ start: Double) { clock.start = start }

    /// Mutes or unmutes the player's audio.
    public mutating func setMuted(_ muted: Bool) { self.muted = muted }

    /// `stop()`: releases the source, `stopping` -> `idle`.
    public mutating func stop(at now: Double) -> [Action] {
        guard state.kind != .idle, state.kind != .stopping else { return [] }
        wantsPlay = false
        endStall(at: now)
        return move(.stopping, at: now) + [.release] + move(.idle, at: now)
    }

    /// A fatal error: the source is released and the player moves to `error` (once).
    public mutating func fail(_ error: PlayerError, at now: Double) -> [Action] {
        guard state.kind != .error else { return [] }
        wantsPlay = false
        endStall(at: now)
        return [.report(error)] + move(.error(error), at: now) + [.release]
    }

    // MARK: Steps

    /// One step of playback: what to do with the buffers as they are at `now`.
    public mutating func step(_ buffer: Buffer, at now: Double) -> [Action] {
        var actions: [Action] = []
        if let timeout = timeouts.check(at: now) { actions.append(.report(timeout)) }
        if now - counters.lastStatistics >= 1, state.kind != .idle, state.kind != .opening {
            counters.lastStatistics = now
            actions.append(.publishStatistics)
        }
        switch state.kind {
        case .seeking: actions += seeking(buffer, at: now)
        case .play: actions += starting(buffer, at: now)
        case .buffering: actions += buffering(buffer, at: now)
        case .playing: actions += playing(buffer, at: now)
        default: actions.append(.wait(until: now + 0.1))
        }
        return actions
    }

    /// After a seek: the target's first frame is shown, then playback goes on as it was; without one in
    /// ``seekGrace``, `buffering` shows it when it comes.
    private mutating func seeking(_ buffer: Buffer, at now: Double) -> [Action] {
        if let frame = buffer.frame {
            needsFirstFrame = false
            let shown = present(frame, at: now)
            if wantsPlay { return shown + move(.play, at: now) }
            return shown + move(.pausing, at: now) + move(.paused, at: now)
        }
        if buffer.ended {
            needsFirstFrame = false
            wantsPlay = false
            return move(.ended, at: now)
        }
        guard now - entered >= Self.seekGrace else {
            return [.awaitBuffer(seconds: 0.04, until: min(entered + Self.seekGrace, now + 0.05))]
        }
        return move(.buffering, at: now)
    }

    /// In `play`: start once the start threshold is buffered (or the rest of the content is); else, after
    /// ``startGrace``, `buffering`.
    private mutating func starting(_ buffer: Buffer, at now: Double) -> [Action] {
        let threshold = threshold(rebuffering: false)
        if buffer.seconds >= threshold || buffer.complete {
            startupBuffer = nil
            endStall(at: now)
            // From the playhead (the frame a seek showed, where playback paused or stalled): anchoring at the next
            // frame would skip the time up to it (two seconds between the keyframes of trick play).
            anchor(at: position, now: now)
            return move(.playing, at: now)
        }
        guard now - entered >= Self.startGrace else {
            return [.awaitBuffer(seconds: threshold, until: min(entered + Self.startGrace, now + 0.05))]
        }
        rebuffering = false
        return move(.buffering, at: now)
    }

    /// In `buffering`: show a pending first frame, then wait for the threshold and go on playing or paused.
    private mutating func buffering(_ buffer: Buffer, at now: Double) -> [Action] {
        var actions: [Action] = []
        if needsFirstFrame {
            if let frame = buffer.frame {
                needsFirstFrame = false
                actions += present(frame, at: now)
            } else if buffer.ended {
                needsFirstFrame = false
            } else {
                return [.awaitBuffer(seconds: 0.04, until: now + 0.05)]
            }
        }
        let threshold = threshold(rebuffering: rebuffering)
        guard buffer.seconds >= threshold || buffer.complete else {
            return actions + [.awaitBuffer(seconds: threshold, until: now + 0.05)]
        }
        endStall(at: now)
        return actions + move(wantsPlay ? .play : .paused, at: now)
    }

    private mutating func playing(_ buffer: Buffer, at now: Double) -> [Action] {
        guard clock.rate != 0 else { return [.wait(until: now + 0.1)] }
        guard let frame = buffer.frame else {
            if buffer.ended, clock.rate < 0 {
                // Backwards, the start pauses playback (when the clock gets there; the first frame may be later).
                let start = min(clock.start, clock.media)
                if clock.time(at: now) > start + 0.001 { return [.wait(until: min(clock.due(start), now + 0.1))] }
                wantsPlay = false
                let moved = move(.pausing, at: now) + move(.paused, at: now)
                position = start
                return moved + [.clockChanged]
            }
            if buffer.ended {
                // The end comes when the clock reaches the duration (the last frame, or keyframe, may be earlier).
                let end = clock.duration
                if end > 0, clock.time(at: now) < end - 0.001 { return [.wait(until: min(clock.due(end), now + 0.1))] }
                wantsPlay = false
                let moved = move(.ended, at: now)
                if clock.duration > 0 { position = clock.duration }
                return moved
            }
            // The forward buffer ran dry: a stall.
            counters.rebuffers += 1
            counters.stallStarted = now
            rebuffering = true
            return [.starved] + move(.buffering, at: now)
        }
        let due = clock.due(frame)
        if due - now > 0.002 { return [.wait(until: min(due, now + 0.1))] }
        if now - due > Self.lateness, hasPresentedSinceAnchor {
            counters.dropped += 1
            position = frame
            return [.drop]
        }
        return present(frame, at: now)
    }

    // MARK: Internals

    /// The start or resume threshold; the first start of an optimized live start waits for its first segment only.
    private func threshold(rebuffering: Bool) -> Double {
        let threshold = settings.threshold(rebuffering: rebuffering)
        guard !rebuffering, let startupBuffer else { return threshold }
        return min(threshold, startupBuffer)
    }

    private mutating func showFirstFrameThenWait(at now: Double) -> [Action] {
        needsFirstFrame = true
        rebuffering = false
        return move(.buffering, at: now)
    }

    private mutating func present(_ frame: Double, at now: Double) -> [Action] {
        position = frame
        counters.presented += 1
        hasPresentedSinceAnchor = true
        if counters.startupTime == nil, let opened = counters.openedAt { counters.startupTime = now - opened }
        return [.present]
    }

    mutating func anchor(at media: Double, now: Double) {
        clock.wall = now
        clock.media = media
        clock.rate = rate * catchUp
        hasPresentedSinceAnchor = false
    }

    private mutating func reanchor(at now: Double) -> [Action] {
        position = currentTime(at: now)
        anchor(at: position, now: now)
        return [.clockChanged]
    }

    private mutating func endStall(at now: Double) {
        if let started = counters.stallStarted { counters.rebufferTime += now - started }
        counters.stallStarted = nil
    }

    private func refusal(_ message: String) -> Action {
        .report(PlayerError(.invalidStateTransition, severity: .warning, message))
    }

    private mutating func move(_ next: PlayerState, at now: Double) -> [Action] {
        switch states.move(to: next) {
        case .moved(let previous, let current):
            entered = now
            timeouts.enter(current.kind, at: now)
            // Leaving `playing` freezes the playhead where the clock had it.
            if clock.running, current.kind != .playing { position = clock.time(at: now) }
            clock.running = current.kind == .playing
            // `changed` publishes the clock with the state.
            var actions: [Action] = [.changed(previous: previous, current: current)]
            // Statistics as of the change, so the last ones after `ended`, `paused` or `error` are complete.
            if current.kind != .playing, current.kind != .opening, current.kind != .idle {
                counters.lastStatistics = now
                actions.append(.publishStatistics)
            }
            return actions
        case .refused(let warning):
            return [.report(warning)]
        }
    }
}
