// MARK: Steps

extension PlaybackMachine {

    /// One step of playback: what to do with the buffers as they are at `now`.
    public mutating func step(_ buffer: Buffer, at now: Double) -> [Action] {
        var actions: [Action] = []
        if let timeout = timeouts.check(at: now) { actions.append(.report(timeout)) }
        // None while stopping: the source is being released, and its counts with it.
        if now - counters.lastStatistics >= 1, ![.idle, .opening, .stopping].contains(state.kind) {
            counters.lastStatistics = now
            actions.append(.publishStatistics)
        }
        switch state.kind {
        case .seeking: actions += seeking(buffer, at: now)
        case .play: actions += starting(buffer, at: now)
        case .buffering: actions += buffering(buffer, at: now)
        case .playing: actions += playing(buffer, at: now)
        // A release is usually over within milliseconds: look again soon.
        case .stopping: actions.append(.wait(until: now + 0.01))
        default: actions.append(.wait(until: now + 0.1))
        }
        return actions
    }

    /// After a seek: the target's first frame is shown, then playback goes on as it was; without one in
    /// ``seekGrace``, `buffering` shows it when it comes.
    mutating func seeking(_ buffer: Buffer, at now: Double) -> [Action] {
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
    mutating func starting(_ buffer: Buffer, at now: Double) -> [Action] {
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
    mutating func buffering(_ buffer: Buffer, at now: Double) -> [Action] {
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

    mutating func playing(_ buffer: Buffer, at now: Double) -> [Action] {
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
    func threshold(rebuffering: Bool) -> Double {
        let threshold = settings.threshold(rebuffering: rebuffering)
        guard !rebuffering, let startupBuffer else { return threshold }
        return min(threshold, startupBuffer)
    }

    mutating func showFirstFrameThenWait(at now: Double) -> [Action] {
        needsFirstFrame = true
        rebuffering = false
        return move(.buffering, at: now)
    }

    mutating func present(_ frame: Double, at now: Double) -> [Action] {
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

    mutating func reanchor(at now: Double) -> [Action] {
        position = currentTime(at: now)
        anchor(at: position, now: now)
        return [.clockChanged]
    }

    mutating func endStall(at now: Double) {
        if let started = counters.stallStarted { counters.rebufferTime += now - started }
        counters.stallStarted = nil
    }

    func refusal(_ message: String) -> Action {
        .report(PlayerError(.invalidStateTransition, severity: .warning, message))
    }

    mutating func move(_ next: PlayerState, at now: Double) -> [Action] {
        switch states.move(to: next) {
        case .moved(let previous, let current):
            entered = now
            timeouts.enter(current.kind, at: now)
            // Leaving `playing` freezes the playhead where the clock had it.
            if clock.running, current.kind != .playing { position = clock.time(at: now) }
            clock.running = current.kind == .playing
            // Statistics as of the change, so the last ones after `ended`, `paused` or `error` are complete (while
            // playing they come every second; before opening and when idle there are none).
            let statistics = ![.playing, .opening, .idle].contains(current.kind)
            if statistics { counters.lastStatistics = now }
            return [.changed(previous: previous, current: current, statistics: statistics)]
        case .refused(let warning):
            return [.report(warning)]
        }
    }
}
