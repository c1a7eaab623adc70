/// Decides, from the position and the live window, when the player is behind the live window and how it catches up
/// with the edge (SPEC 4.3). A pure value: the engine feeds it observations and carries out its decisions.
///
/// Catching up has hysteresis: it starts when the distance to the edge exceeds the catch-up threshold and stops at
/// the cutoff distance.
///
/// **The user's seek wins.** When the user seeks to a position further from the edge than the catch-up threshold,
/// catching up is suspended. It resumes only when the playhead is back within the cutoff distance of the edge, for
/// example after a seek to live. While paused, nothing is decided either. So the controller never drags a viewer
/// out of the DVR window they chose.
struct LiveEdgeController: Sendable, Hashable {
    /// What the engine should do.
    enum Decision: Sendable, Hashable {
        /// Nothing.
        case none
        /// Set the playback rate (catch-up started or ended).
        case setRate(Double)
        /// Jump to this position.
        case seek(to: Double)
    }

    /// The configuration (``reconfigure(_:)`` changes it while playing).
    private(set) var configuration: LiveConfiguration
    /// Whether catching up by speed-up is in progress.
    private(set) var catchingUp = false
    /// Whether the user's seek suspended catching up.
    private(set) var suspendedByUser = false
    private var behindReported = false
    /// Whether the latency at the start of playback was looked at.
    private var startChecked = false
    /// How far past the latency target drift is tolerated (set from the segment duration each observation).
    private var band = 2.0

    /// Creates a controller.
    init(configuration: LiveConfiguration) {
        self.configuration = configuration
    }

    /// New settings from now on; where catching up stands is kept.
    mutating func reconfigure(_ configuration: LiveConfiguration) {
        self.configuration = configuration
    }

    /// The latency to settle at, seconds (``LiveConfiguration/liveEdgeLatencyMs``).
    var latencyTarget: Double? { configuration.liveEdgeLatencyMs.map { max(0, Double($0) / 1000) } }

    /// The distance beyond which catching up starts (and beyond which a user's seek suspends it): the latency target
    /// plus its band when only a target is set, else the catch-up threshold.
    private var catchUpDistance: Double {
        guard configuration.chaseLiveEdge == .disabled, let target = latencyTarget else {
            return configuration.chaseLiveEdgeCatchupThreshold
        }
        return target + band
    }

    /// The distance catching up settles at.
    private var settleDistance: Double {
        guard configuration.chaseLiveEdge == .disabled, let target = latencyTarget else {
            return configuration.chaseLiveEdgeCutoffThreshold
        }
        return target
    }

    /// Where to start in a live window: the latency target behind the edge when one is set; else `liveEdgeDelay`
    /// behind it (a DASH MPD's `suggestedPresentationDelay` when that is larger). Never closer than three target
    /// durations (RFC 8216, 6.3.3) and never before the window.
    func startPosition(
        window: ClosedRange<Double>, targetDuration: Double = 0, suggestedDelay: Double? = nil
    ) -> Double {
        let wanted = latencyTarget ?? max(configuration.liveEdgeDelay, suggestedDelay ?? 0)
        let distance = max(wanted, 3 * targetDuration)
        return min(window.upperBound, max(window.lowerBound, window.upperBound - distance))
    }

    /// Whether `position` lies behind the seekable window (with the tolerance).
    func isBehindLiveWindow(position: Double, window: ClosedRange<Double>) -> Bool {
        position < max(0, window.lowerBound - configuration.behindLiveWindowTolerance)
    }

    /// The user sought to `position`: suspends catching up when that is further from the edge than the catch-up
    /// threshold. Returns a rate reset if a speed-up was running.
    mutating func userSought(to position: Double, window: ClosedRange<Double>) -> Decision {
        let distance = window.upperBound - position
        let wasCatchingUp = catchingUp
        catchingUp = false
        suspendedByUser = distance > catchUpDistance
        return wasCatchingUp ? .setRate(1) : .none
    }

    /// Looks at the playhead. Returns a behind-live-window warning once each time the playhead falls behind, and
    /// a catch-up decision.
    ///
    /// `segmentDuration` (the stream's target or segment duration) sizes the band a latency target tolerates: the
    /// window grows a segment at a time, so the distance to its end moves by that much on its own.
    mutating func observe(
        position: Double, window: ClosedRange<Double>, isPlaying: Bool, segmentDuration: Double = 0
    )
        -> (decision: Decision, warning: PlayerError?)
    {
        var warning: PlayerError?
        if isBehindLiveWindow(position: position, window: window) {
            if !behindReported {
                behindReported = true
                warning = PlayerError(
                    .playerBehindLiveWindow, severity: .warning,
                    "the position \(formatSeconds(position)) s is behind the live window starting at \(formatSeconds(window.lowerBound)) s"
                )
            }
        } else {
            behindReported = false
        }
        let distance = window.upperBound - position
        band = max(1.5, segmentDuration + 0.5, configuration.chaseLiveEdgeHLSSegmentDuration)
        let cutoff = configuration.chaseLiveEdgeCutoffThreshold
        if suspendedByUser, distance <= settleDistance { suspendedByUser = false }
        guard isPlaying, !suspendedByUser else {
            if catchingUp, !isPlaying {
                catchingUp = false
                return (.setRate(1), warning)
            }
            return (.none, warning)
        }
        switch configuration.chaseLiveEdge {
        case .disabled:
            // With a latency target, drift (after a stall, say) is taken back by the speed-up ratio: it starts once
            // the distance exceeds the target by more than the band (a segment's worth of jitter, at least 2 s) and
            // ends at the target.
            guard let target = latencyTarget else { return (.none, warning) }
            if !startChecked {
                // A slow start (a busy device, a slow first segment) is not drift to crawl back from: the first
                // look after playback starts jumps to the target.
                startChecked = true
                if distance > catchUpDistance { return (.seek(to: window.upperBound - target), warning) }
            }
            if !catchingUp, distance > catchUpDistance {
                catchingUp = true
                return (.setRate(configuration.chaseLiveEdgeSpeedupRatio), warning)
            }
            if catchingUp, distance <= target {
                catchingUp = false
                return (.setRate(1), warning)
            }
            return (.none, warning)
        case .speedupPlayback:
            if !catchingUp, distance > configuration.chaseLiveEdgeCatchupThreshold {
                catchingUp = true
                return (.setRate(configuration.chaseLiveEdgeSpeedupRatio), warning)
            }
            if catchingUp, distance <= cutoff {
                catchingUp = false
                return (.setRate(1), warning)
            }
            return (.none, warning)
        case .skipFrames:
            guard distance > configuration.chaseLiveEdgeCatchupThreshold else { return (.none, warning) }
            var target = window.upperBound - cutoff
            let segment = configuration.chaseLiveEdgeHLSSegmentDuration
            if segment > 0 {
                // Land on a segment boundary of the window, at or before the cutoff point.
                target = window.lowerBound + ((target - window.lowerBound) / segment).rounded(.down) * segment
            }
            target = max(target, window.lowerBound)
            return (target > position ? .seek(to: target) : .none, warning)
        }
    }
}
