import FilmstripImaging
import FilmstripLoading
import FilmstripMedia
import FilmstripStreaming
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The engine behind ``Player``: runs on the player's thread, owns the decoder, and drives the state machine,
/// the playback clock, frame presentation, timeouts and statistics.
struct PlaybackEngine {
    private var machine = PlayerStateMachine()
    private var timeouts = StateTimeoutController(configuration: StateTimeoutConfiguration())
    private var configuration: PlayerConfiguration?
    private var feeder: FrameFeeder?
    private var duration = 0.0
    /// After a seek or a paused open: the first frame is shown as soon as it is decoded.
    private var needsFirstFrame = false
    /// Whether the current buffering is a stall during playback (counted, resumed at `minRebufferTime`).
    private var rebuffering = false
    private var rebuffers = 0
    private var pending: DecodedVideoFrame?
    /// Whether playback should run (play was asked) as opposed to paused.
    private var wantsPlay = false
    // The playback clock: media time = anchorMedia + (now - anchorWall) * rate.
    private var anchorWall = 0.0
    private var anchorMedia = 0.0
    private var rate = 1.0
    /// The live catch-up factor (1 unless speeding up to the live edge); the clock runs at `rate * catchUp`.
    private var catchUp = 1.0
    private var clockRate: Double { rate * catchUp }
    // HLS and DASH streaming.
    private var hls: StreamSession?
    private var live: LiveEdgeController?
    private var isLive = false
    private var window: ClosedRange<Double>?
    private var rebufferTime = 0.0
    private var stallStarted: Double?
    private var position = 0.0
    private var presented = 0
    private var dropped = 0
    private var openedAt: Double?
    private var startupTime: Double?
    private var lastStats = 0.0
    private var hasPresentedSinceAnchor = false

    private static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    mutating func run(_ player: () -> Player?) {
        while let player = player() {
            if player.shared.withLock({ $0.shutdown }) { break }
            let commands = player.shared.withLock { shared -> [Player.Command] in
                defer { shared.commands.removeAll() }
                return shared.commands
            }
            for command in commands { handle(command, player) }
            step(player)
        }
        feeder?.stop()
    }

    // MARK: Commands

    private mutating func handle(_ command: Player.Command, _ player: Player) {
        switch command {
        case .load(let configuration):
            load(configuration, player)
        case .open(let autoplay):
            guard machine.state.kind == .ready else {
                warn(player, "open() needs loaded content in the ready state (the player is \(machine.state))")
                return
            }
            wantsPlay = autoplay
            if autoplay {
                move(.play, player)
            } else {
                // Show the first frame as soon as it is decoded, then wait paused.
                needsFirstFrame = true
                rebuffering = false
                move(.buffering, player)
            }
        case .play:
            switch machine.state.kind {
            case .ready, .paused, .pausing:
                wantsPlay = true
                move(.play, player)
            case .ended:
                wantsPlay = true
                seek(to: 0, player)
            default:
                warn(player, "play() is ignored in the \(machine.state) state")
            }
        case .pause:
            switch machine.state.kind {
            case .play, .playing, .buffering:
                wantsPlay = false
                move(.pausing, player)
                position = mediaTime()
                move(.paused, player)
            case .ready:
                wantsPlay = false
                move(.paused, player)
            default:
                warn(player, "pause() is ignored in the \(machine.state) state")
            }
        case .seek(let seconds):
            switch machine.state.kind {
            case .ready, .play, .playing, .pausing, .paused, .buffering, .ended:
                seek(to: seconds, player)
            default:
                warn(player, "seek() is ignored in the \(machine.state) state")
            }
        case .rate(let requested):
            let resolved = player.ratePolicy.resolve(requested)
            if let warning = resolved.warning { report(warning, player) }
            position = mediaTime()
            rate = resolved.rate
            anchor(at: position)
            let clock = (anchorWall, anchorMedia, clockRate, machine.state.kind == .playing, duration)
            player.shared.withLock {
                $0.rate = resolved.rate
                $0.clock = clock
            }
        case .stop:
            guard machine.state.kind != .idle, machine.state.kind != .stopping else { return }
            move(.stopping, player)
            feeder?.stop()
            feeder = nil
            hls?.stop()
            hls = nil
            pending = nil
            wantsPlay = false
            move(.idle, player)
        }
    }

    private mutating func load(_ configuration: PlayerConfiguration, _ player: Player) {
        guard machine.state.kind == .idle || machine.state.kind == .ended else {
            warn(player, "load() needs an idle or ended player (it is \(machine.state)); call stop() first")
            return
        }
        self.configuration = configuration
        timeouts = StateTimeoutController(configuration: configuration.stateTimeouts)
        openedAt = Self.now()
        startupTime = nil
        presented = 0
        dropped = 0
        position = 0
        pending = nil
        feeder?.stop()
        feeder = nil
        rebuffers = 0
        rebufferTime = 0
        stallStarted = nil
        catchUp = 1
        hls?.stop()
        hls = nil
        live = nil
        isLive = false
        window = nil
        move(.opening, player)
        var options = FrameExtractorOptions()
        let network = NetworkConfiguration.merged(sdk: player.sdkNetwork, player: configuration.network)
        options.loading.additionalHeaders = network.httpAdditionalHeaders ?? [:]
        if let ms = network.timeoutIntervalForResourceMs {
            options.loading.resourceTimeout = Double(ms) / 1000
        }
        // The player's own URL session, configured from the merged network settings.
        let session = URLSessionConfiguration.ephemeral
        session.urlCache = nil
        network.apply(to: session)
        let transport = URLSessionDataLoader(sessionConfiguration: session)
        if !configuration.url.isFileURL { options.transport = transport }
        var ranges: [ClosedRange<Double>] = []
        if ManifestDetection.isManifest(configuration.url) {
            let settings = StreamSession.Settings(
                streaming: configuration.streaming, maxBuffer: configuration.maxPrebufferTime,
                keyTimeout: network.timeoutIntervalForDrmAcquisitionMs.map { Double($0) / 1000 },
                waitsForConnectivity: network.waitsForConnectivity ?? true,
                connectivityBudget: .seconds(options.loading.resourceTimeout))
            guard openStream(configuration, transport: transport, loading: options.loading, settings: settings, player)
            else { return }
            ranges = window.map { [$0] } ?? []
        } else {
            do {
                let opened = try VideoDecoder(url: configuration.url, options: options)
                duration = opened.duration
                feeder = FrameFeeder(decoder: opened, capacity: configuration.maxPrebufferTime)
            } catch {
                fail(error, player)
                return
            }
            ranges = duration > 0 ? [0...duration] : []
        }
        let callback = player.shared.withLock { shared in
            shared.seekable = ranges
            return shared.callbacks.onSeekableTimeRanges
        }
        callback?(ranges)
        move(.ready, player)
        publishStats(player)
    }

    private mutating func seek(to requested: Double, _ player: Player, byUser: Bool = true) {
        guard let feeder else { return }
        var target = min(max(0, requested), duration > 0 ? duration : requested)
        if isLive, let window {
            target = min(max(requested, window.lowerBound), window.upperBound)
            if byUser, let decision = live?.userSought(to: target, window: window), decision != .none {
                catchUp = 1
            }
        }
        move(.seeking, player)
        pending = nil
        position = target
        feeder.seek(to: target)
        needsFirstFrame = true
        rebuffering = false
        // Usually the target is decoded at once; if not, buffering shows it when it arrives.
        feeder.waitForBuffer(0.04, timeout: 0.25)
        switch feeder.take() {
        case .frame(let frame):
            pending = frame
            needsFirstFrame = false
            present(player)
            move(wantsPlay ? .play : .pausing, player)
            if !wantsPlay { move(.paused, player) }
        case .ended:
            needsFirstFrame = false
            move(.ended, player)
        case .failed(let error):
            fail(error, player)
        case .empty:
            move(.buffering, player)
        }
    }

    // MARK: Playback

    private mutating func step(_ player: Player) {
        let now = Self.now()
        if let error = timeouts.check(at: now) { report(error, player) }
        if now - lastStats >= 1, feeder != nil { publishStats(player) }
        if hls != nil { streamStep(player, now: now) }
        switch machine.state.kind {
        case .play:
            starting(player)
        case .playing:
            playing(player, now: now)
        case .buffering:
            buffering(player)
        default:
            wait(player, until: now + 0.1)
        }
    }

    /// In `play`: start once `minPrebufferTime` is decoded ahead (or the rest of the video is), else buffer.
    private mutating func starting(_ player: Player) {
        guard let feeder, let configuration else { return }
        let ready = hasBuffer(Self.threshold(configuration.minPrebufferTime, configuration), timeout: 0.2, player)
        guard take(player) else { return }
        if ready || feeder.isEnded {
            endStall()
            anchor(at: pending?.time ?? position)
            move(.playing, player)
        } else {
            rebuffering = false
            move(.buffering, player)
        }
    }

    /// In `buffering`: show a pending first frame, then wait for enough data and go on playing or paused.
    private mutating func buffering(_ player: Player) {
        guard let feeder, let configuration else { return }
        if needsFirstFrame {
            guard take(player) else { return }
            if pending == nil {
                feeder.waitForBuffer(0.04, timeout: 0.05)
                return
            }
            needsFirstFrame = false
            present(player)
        }
        let target = Self.threshold(
            rebuffering ? configuration.minRebufferTime : configuration.minPrebufferTime, configuration)
        guard hasBuffer(target, timeout: 0.05, player) || feeder.isEnded else { return }
        endStall()
        if wantsPlay {
            move(.play, player)
        } else {
            move(.paused, player)
        }
    }

    /// A start or resume threshold, capped by what the forward buffer may hold (`maxPrebufferTime`, at least 0.5 s),
    /// so a small buffer never waits for more than it can keep.
    private static func threshold(_ seconds: Double, _ configuration: PlayerConfiguration) -> Double {
        min(seconds, max(0.5, configuration.maxPrebufferTime))
    }

    private mutating func playing(_ player: Player, now: Double) {
        guard clockRate > 0 else {
            wait(player, until: now + 0.1)
            return
        }
        guard take(player) else { return }
        guard let frame = pending else {
            if feeder?.isEnded ?? true {
                position = duration > 0 ? duration : position
                wantsPlay = false
                move(.ended, player)
            } else {
                // The forward buffer ran dry: a stall.
                position = mediaTime()
                rebuffers += 1
                rebuffering = true
                stallStarted = Self.now()
                hls?.markStarvation()
                move(.buffering, player)
            }
            return
        }
        let due = anchorWall + (frame.time - anchorMedia) / clockRate
        if due - now > 0.002 {
            wait(player, until: min(due, now + 0.1))
            return
        }
        // More than two frame intervals late (at 25 fps): drop it, unless it is the first since the clock started.
        if now - due > 0.08, hasPresentedSinceAnchor {
            dropped += 1
            position = frame.time
            pending = nil
            return
        }
        present(player)
    }

    /// Takes the next decoded frame into `pending` when there is none; false after a failure (now in error).
    private mutating func take(_ player: Player) -> Bool {
        guard pending == nil, let feeder else { return true }
        switch feeder.take() {
        case .frame(let frame): pending = frame
        case .empty, .ended: break
        case .failed(let error):
            fail(error, player)
            return false
        }
        return true
    }

    private mutating func present(_ player: Player) {
        guard let frame = pending else { return }
        pending = nil
        position = frame.time
        presented += 1
        hasPresentedSinceAnchor = true
        if startupTime == nil, let openedAt { startupTime = Self.now() - openedAt }
        guard let output = player.shared.withLock({ $0.callbacks.output }) else { return }
        if let image = try? frame.image() { output.display(image, at: frame.time) }
    }

    private mutating func anchor(at media: Double) {
        anchorWall = Self.now()
        anchorMedia = media
        hasPresentedSinceAnchor = false
    }

    private func mediaTime() -> Double {
        guard machine.state.kind == .playing else { return position }
        let time = anchorMedia + (Self.now() - anchorWall) * clockRate
        return duration > 0 ? min(time, duration) : time
    }

    private func wait(_ player: Player, until deadline: Double) {
        let seconds = deadline - Self.now()
        guard seconds > 0 else { return }
        player.wakeUp.lock()
        if player.shared.withLock({ $0.commands.isEmpty && !$0.shutdown }) {
            _ = player.wakeUp.wait(until: Date(timeIntervalSinceNow: seconds))
        }
        player.wakeUp.unlock()
    }

    // MARK: Streaming (HLS and DASH)

    /// Opens an HLS or DASH presentation (remote or local): the manifest, the start position (live: behind the edge
    /// per ``LiveEdgeController/startPosition(window:targetDuration:suggestedDelay:)``), the fetcher and the decoder.
    private mutating func openStream(
        _ configuration: PlayerConfiguration, transport: any DataLoading, loading: LoadingConfiguration,
        settings: StreamSession.Settings, _ player: Player
    ) -> Bool {
        weak let weakPlayer = player
        let session = StreamSession(
            url: configuration.url, transport: transport, loading: loading, settings: settings,
            cmcd: configuration.cmcd, report: { error in weakPlayer?.deliver(error) })
        let opening: StreamOpening
        do {
            opening = try session.open()
        } catch {
            report(error, player)
            move(.error(error), player)
            return false
        }
        hls = session
        isLive = opening.isLive
        window = opening.window
        duration = opening.duration
        var start = opening.window.lowerBound
        if opening.isLive {
            let controller = LiveEdgeController(configuration: configuration.live)
            start = controller.startPosition(
                window: opening.window, targetDuration: opening.targetDuration, suggestedDelay: opening.suggestedDelay)
            live = controller
        }
        position = session.start(at: start)
        // The forward buffer is the fetched segments; decoded frames are kept for about a second ahead.
        feeder = FrameFeeder(decoder: SegmentFrameSource(session: session), capacity: 1)
        return true
    }

    /// Once per step while streaming: tells the fetcher where the playhead is, follows the live window, and carries
    /// out the live-edge controller's decisions.
    private mutating func streamStep(_ player: Player, now: Double) {
        guard let hls else { return }
        let kind = machine.state.kind
        let current = mediaTime()
        hls.update(playhead: current, rate: clockRate, startup: kind != .playing && kind != .paused)
        if let failure = hls.buffered(from: current).failure, kind != .error {
            fail(reported: failure, player)
            return
        }
        guard let latest = hls.window else { return }
        if latest.isLive != isLive || latest.range != window {
            isLive = latest.isLive
            window = latest.range
            if !isLive, duration == 0 { duration = latest.range.upperBound }
            let ranges = [latest.range]
            let callback = player.shared.withLock { shared in
                shared.seekable = ranges
                return shared.callbacks.onSeekableTimeRanges
            }
            callback?(ranges)
        }
        guard isLive, var controller = live else { return }
        let (decision, warning) = controller.observe(
            position: current, window: latest.range, isPlaying: kind == .playing,
            segmentDuration: latest.targetDuration)
        live = controller
        if let warning { report(warning, player) }
        switch decision {
        case .none:
            break
        case .setRate(let factor):
            position = mediaTime()
            catchUp = factor
            anchor(at: position)
            let clock = (anchorWall, anchorMedia, clockRate, kind == .playing, duration)
            player.shared.withLock { $0.clock = clock }
        case .seek(let target):
            seek(to: target, player, byUser: false)
        }
    }

    /// Whether `target` seconds are buffered ahead of the playhead (waiting up to `timeout` for it): decoded frames
    /// for files, fetched segments (and a decoded frame) for streams.
    private mutating func hasBuffer(_ target: Double, timeout: Double, _ player: Player) -> Bool {
        guard let feeder else { return false }
        guard let hls else { return feeder.waitForBuffer(target, timeout: timeout) }
        let from = pending?.time ?? position
        let state = hls.buffered(from: from)
        if (state.seconds >= target || state.complete), pending != nil || feeder.bufferedSeconds > 0 { return true }
        // Short naps: the fetcher and the decoder run on their own threads, so look again soon.
        wait(player, until: Self.now() + min(timeout, 0.01))
        return false
    }

    /// Seconds buffered ahead of the playhead.
    private var bufferLength: Double {
        if let hls { return hls.buffered(from: mediaTime()).seconds }
        return feeder?.bufferedSeconds ?? 0
    }

    private mutating func endStall() {
        if let started = stallStarted { rebufferTime += Self.now() - started }
        stallStarted = nil
    }

    // MARK: Reporting

    private mutating func move(_ next: PlayerState, _ player: Player) {
        switch machine.move(to: next) {
        case .moved(let previous, let current):
            timeouts.enter(current.kind, at: Self.now())
            let clock = (
                anchorWall, current.kind == .playing ? anchorMedia : position, clockRate, current.kind == .playing,
                duration
            )
            let callback = player.shared.withLock { shared in
                shared.state = current
                shared.clock = clock
                return shared.callbacks.onState
            }
            callback?(previous, current)
            // Statistics as of the change, so the last ones after `ended`, `paused` or `error` are complete.
            if feeder != nil, current.kind != .playing { publishStats(player) }
        case .refused(let warning):
            report(warning, player)
        }
    }

    private mutating func fail(_ error: any Error, _ player: Player) {
        if let stream = error as? PlayerError {
            // The stream's own failure, already described.
            fail(reported: stream, player)
            return
        }
        let media = error as? MediaError
        let type: PlayerError.ErrorType =
            switch media?.kind {
            case .inputUnavailable?, .timedOut?: .sourceUnavailable
            case .decodeFailed?: .decodeFailed
            default: .sourceInvalid
            }
        fail(
            reported: PlayerError(type, severity: .fatal, media?.description ?? "\(error)", underlying: media), player)
    }

    private mutating func fail(reported playerError: PlayerError, _ player: Player) {
        guard machine.state.kind != .error else { return }
        feeder?.stop()
        feeder = nil
        pending = nil
        wantsPlay = false
        report(playerError, player)
        move(.error(playerError), player)
    }

    private func warn(_ player: Player, _ message: String) {
        report(PlayerError(.invalidStateTransition, severity: .warning, message), player)
    }

    private func report(_ error: PlayerError, _ player: Player) { player.deliver(error) }

    private mutating func publishStats(_ player: Player) {
        lastStats = Self.now()
        var stats = PlayerStats(
            state: machine.state.kind, position: mediaTime(), duration: duration, playbackRate: rate,
            audioMuted: rate < 0 || rate > 2, decodedFrames: feeder?.framesDecoded ?? 0, presentedFrames: presented,
            droppedFrames: dropped, bytesRead: feeder?.bytesRead ?? 0, startupTime: startupTime,
            bufferLength: bufferLength, rebufferCount: rebuffers)
        stats.rebufferTime = rebufferTime + (stallStarted.map { Self.now() - $0 } ?? 0)
        if let hls {
            let network = hls.statistics
            stats.bitrate = network.bitrate
            stats.bandwidthEstimate = network.bandwidthEstimate
            stats.segmentsLoaded = network.segmentsLoaded
            stats.rendition = network.rendition
            stats.isLive = isLive
            if isLive, let window { stats.liveLatency = max(0, window.upperBound - stats.position) }
        }
        let callback = player.shared.withLock { shared in
            shared.stats = stats
            return shared.callbacks.onStats
        }
        callback?(stats)
    }
}
