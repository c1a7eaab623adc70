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
    public internal(set) var settings: Configuration
    /// The state graph.
    public internal(set) var states = PlayerStateMachine()
    /// The playback clock (see ``publishedClock`` for the playhead it shows).
    public internal(set) var clock = PlaybackClock()
    /// Whether playback should run (play was asked, and not paused since).
    public internal(set) var wantsPlay = false
    /// Whether audio is muted by the player (a muted-only autoplay, or ``setMuted(_:)``).
    public internal(set) var muted = false
    /// The playback rate asked for (the clock runs at this times ``catchUp``).
    public internal(set) var rate = 1.0
    /// The live catch-up factor (1 unless speeding up to the live edge).
    public internal(set) var catchUp = 1.0

    var timeouts: StateTimeoutController
    var position = 0.0
    /// After a seek or a paused open: the first frame is shown as soon as it is decoded.
    var needsFirstFrame = false
    /// Whether the current buffering is a stall during playback (resumed at `minRebufferTime`).
    var rebuffering = false
    var entered = 0.0
    /// The buffer the first start waits for, when shorter than `minPrebufferTime` (cleared once playing).
    var startupBuffer: Double?
    var hasPresentedSinceAnchor = false
    var counters = Counters()

    /// A machine in `idle`.
    public init(settings: Configuration) {
        self.settings = settings
        timeouts = StateTimeoutController(configuration: settings.stateTimeouts)
    }

    /// The state.
    public var state: PlayerState { states.state }

    // MARK: Commands

    /// `load`: from `idle` or `ended` to `opening`, with new settings and fresh statistics. The executor opens the
    /// source when the state is `opening` afterwards.
    public mutating func load(_ settings: Configuration, at now: Double) -> [Action] {
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
    public mutating func reconfigure(_ settings: Configuration) {
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

    /// `stop()`: releases the source and stays `stopping` until the executor says it is released
    /// (``released(at:)``); a release that lasts past the `stopping` timeout is reported, and still awaited.
    public mutating func stop(at now: Double) -> [Action] {
        guard state.kind != .idle, state.kind != .stopping else { return [] }
        wantsPlay = false
        endStall(at: now)
        return move(.stopping, at: now) + [.release]
    }

    /// The source is released (its decoder threads have ended): `stopping` -> `idle`.
    public mutating func released(at now: Double) -> [Action] {
        guard state.kind == .stopping else { return [] }
        return move(.idle, at: now)
    }

    /// A fatal error: the source is released and the player moves to `error` (once).
    public mutating func fail(_ error: PlayerError, at now: Double) -> [Action] {
        guard state.kind != .error else { return [] }
        wantsPlay = false
        endStall(at: now)
        return [.report(error)] + move(.error(error), at: now) + [.release]
    }
}
