/// The playhead as a value, part of ``PlaybackMachine``: the playback clock, the position while the clock stands, the
/// rate and the live catch-up, which frame is due (wait, present or drop), and what the statistics count of it. The
/// machine decides the states around it; times are seconds on the player's injected clock.
struct Playhead: Sendable {
    /// What happens next while playing, for a step's next decoded frame.
    enum Next: Sendable, Hashable {
        /// Nothing before `until`.
        case wait(until: Double)
        /// Show the frame at this media time.
        case present(Double)
        /// Let the frame go: it is late.
        case drop
        /// The forward buffer ran dry.
        case starved
        /// Playing backwards, the clock reached the start of what may be played (the media time).
        case reachedStart(Double)
        /// The clock reached the end of the content.
        case reachedEnd
    }

    /// What the statistics count.
    struct Counters: Sendable {
        var presented = 0
        var dropped = 0
        var rebuffers = 0
        var rebufferTime = 0.0
        var stallStarted: Double?
        var openedAt: Double?
        var startupTime: Double?
        var lastStatistics = -Double.infinity
    }

    /// A frame later than this (two intervals at 25 fps) is dropped, unless it is the first since the clock started.
    static let lateness = 0.08

    private(set) var clock = PlaybackClock()
    /// The playhead while the clock stands.
    private(set) var position = 0.0
    /// The playback rate asked for (the clock runs at this times ``catchUp``).
    private(set) var rate = 1.0
    /// The live catch-up factor (1 unless speeding up to the live edge).
    private(set) var catchUp = 1.0
    /// Whether a frame was shown since the clock was anchored (the first one after is never late).
    private var presentedSinceAnchor = false
    private(set) var counters = Counters()

    /// New content, opened from `now`: a stopped clock at 0 and fresh counts (the rate asked for stays).
    mutating func reset(openedAt now: Double) {
        counters = Counters()
        counters.openedAt = now
        position = 0
        catchUp = 1
        clock = PlaybackClock()
        clock.rate = rate
    }

    /// The source is open: its duration (0 when unknown or live) and where playback starts.
    mutating func opened(duration: Double, start: Double) {
        clock.duration = duration
        position = start
    }

    /// The playhead at `now`: the clock while it runs, else the last position.
    func time(at now: Double) -> Double { clock.running ? clock.time(at: now) : position }

    /// The clock to publish: running while playing, else stopped at the playhead.
    var published: PlaybackClock {
        var published = clock
        if !published.running { published.media = position }
        return published
    }

    mutating func move(to time: Double) { position = time }
    mutating func setDuration(_ duration: Double) { clock.duration = duration }
    mutating func setStart(_ start: Double) { clock.start = start }

    /// A new rate or catch-up factor: the clock goes on from where it is at `now`.
    mutating func setRate(_ rate: Double, catchUp: Double, at now: Double) {
        self.rate = rate
        self.catchUp = catchUp
        position = time(at: now)
        anchor(at: position, now: now)
    }

    /// Runs or stops the clock; stopping freezes the playhead where the clock had it.
    mutating func setRunning(_ running: Bool, at now: Double) {
        if clock.running, !running { position = clock.time(at: now) }
        clock.running = running
    }

    /// Starts the clock from the playhead (the frame a seek showed, where playback paused or stalled): anchoring at
    /// the next frame would skip the time up to it (two seconds between the keyframes of trick play).
    mutating func start(at now: Double) {
        anchor(at: position, now: now)
        clock.running = true
    }

    /// While playing, the clock follows `audioTime` (the media time being heard), so the picture follows the sound:
    /// further than `tolerance` from it, the clock is re-anchored to it at once; nearer, it moves a tenth of the way
    /// on each call (an estimate of what is heard jitters by a millisecond or two: a clock that took each estimate
    /// would make the picture judder, one that waited for the tolerance would stay up to that far off). Returns
    /// whether the clock moved.
    mutating func follow(audioTime: Double, at now: Double, tolerance: Double) -> Bool {
        guard clock.running else { return false }
        let drift = clock.time(at: now) - audioTime
        if abs(drift) > tolerance {
            anchor(at: audioTime, now: now)
            return true
        }
        guard abs(drift) > 0.0005 else { return false }
        // A slew, not a new anchor: a late frame is still dropped.
        clock.wall = now
        clock.media = audioTime + drift * 0.9
        return true
    }

    /// While playing: what the next decoded `frame` (if any) and the source's end mean at `now`. A frame is due
    /// `lead` seconds before its time on the clock (the output's ``VideoOutput/presentationDelay``).
    mutating func next(frame: Double?, ended: Bool, at now: Double, lead: Double = 0) -> Next {
        guard let frame else {
            if ended, clock.rate < 0 {
                // Backwards, the start pauses playback (when the clock gets there; the first frame may be later).
                let start = min(clock.start, clock.media)
                if clock.time(at: now) > start + 0.001 { return .wait(until: min(clock.due(start), now + 0.1)) }
                return .reachedStart(start)
            }
            if ended {
                // The end comes when the clock reaches the duration (the last frame, or keyframe, may be earlier).
                let end = clock.duration
                if end > 0, clock.time(at: now) < end - 0.001 { return .wait(until: min(clock.due(end), now + 0.1)) }
                return .reachedEnd
            }
            counters.rebuffers += 1
            counters.stallStarted = now
            return .starved
        }
        // A frame past the duration: the content is longer than its header or bitrate estimate said (a raw stream,
        // a truncated index), and plays on to its real end.
        if clock.duration > 0, frame > clock.duration { clock.duration = frame }
        let due = clock.due(frame) - lead
        if due - now > 0.002 { return .wait(until: min(due, now + 0.1)) }
        if now - due > Self.lateness, presentedSinceAnchor {
            counters.dropped += 1
            position = frame
            return .drop
        }
        return .present(frame)
    }

    /// `frame` is shown.
    mutating func present(_ frame: Double, at now: Double) {
        position = frame
        counters.presented += 1
        presentedSinceAnchor = true
        if counters.startupTime == nil, let opened = counters.openedAt { counters.startupTime = now - opened }
    }

    /// A stall (or a start's wait counted as one) is over.
    mutating func endStall(at now: Double) {
        if let started = counters.stallStarted { counters.rebufferTime += now - started }
        counters.stallStarted = nil
    }

    /// Whether statistics are due at `now` (once a second), counting them as published if so.
    mutating func statisticsDue(at now: Double) -> Bool {
        guard now >= nextStatistics else { return false }
        counters.lastStatistics = now
        return true
    }

    /// When statistics are next due.
    var nextStatistics: Double { counters.lastStatistics + 1 }

    /// Statistics published with a state change at `now`.
    mutating func statisticsPublished(at now: Double) { counters.lastStatistics = now }

    private mutating func anchor(at media: Double, now: Double) {
        clock.wall = now
        clock.media = media
        clock.rate = rate * catchUp
        presentedSinceAnchor = false
    }
}
