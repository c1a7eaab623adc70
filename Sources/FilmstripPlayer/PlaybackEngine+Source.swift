import FilmstripLoading
import FilmstripMedia
import FilmstripStreaming
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Opening a source (a file, progressive http, an HLS or DASH presentation) and following a stream's window and
/// live edge.
extension PlaybackEngine {
    mutating func load(_ configuration: PlayerConfiguration, _ player: Player) {
        execute(machine.load(PlaybackMachine.Configuration(configuration), at: now), player)
        guard machine.state.kind == .opening else { return }
        guard configuration.preferredEngine == player.ratePolicy.engine else {
            fail(PlayerError(configuration.preferredEngine, playedBy: player.ratePolicy.engine), player)
            return
        }
        publishAudioTracks(player)
        // A file decoder of the previous content may serve the next one (same codec parameters).
        let previous = stream == nil ? feeder?.stopAndWait() as? VideoDecoder : nil
        release()
        self.configuration = configuration
        live = nil
        isLive = false
        window = nil
        startupSaving = nil
        sound = EngineSound(output: player.shared.withLock { $0.callbacks.audioOutput })
        frames.newContent()
        var options = FrameExtractorConfiguration()
        let network = NetworkConfiguration.merged(sdk: player.sdkNetwork, player: configuration.network)
        options.loading = network.applied(to: options.loading)
        let prepareLicense = player.prepareLicenseRequest
        configuration.applyKeys(to: &options, network: network, prepare: prepareLicense)
        let transport = network.transport()
        if !configuration.url.isFileURL { options.transport = transport }
        fileOptions = options
        let duration: Double
        var start = 0.0
        var startupBuffer: Double?
        let ranges: [ClosedRange<Double>]
        if ManifestDetection.isManifest(configuration.url) {
            let settings = configuration.streamSettings(
                network: network, budget: options.loading.resourceTimeout, fetchesAudio: sound.format != nil,
                prepareLicense: prepareLicense)
            guard
                let opened = openStream(
                    configuration, transport: transport, loading: options.loading, settings: settings, player)
            else { return }
            (duration, start, startupBuffer) = opened
            ranges = window.map { [$0] } ?? []
        } else {
            do {
                let file = try OpenedFile(
                    configuration.url, options: options, reusing: previous, sound: sound.format,
                    preferredLanguage: configuration.preferredAudioLanguage)
                if file.createdDecoder { decodersCreated += 1 }
                (duration, fileAudioOnly, fileAudio) = (file.duration, file.audioOnly, file.audio)
                if let sound = file.frames as? AudioFileSource { sound.showCard(on: player) }
                weak let weakPlayer = player
                frames.open(
                    FrameFeeder(
                        decoder: file.frames, capacity: configuration.maxPrebufferTime,
                        keyframesOnly: player.asksKeyframesOnly, activity: clock.activity,
                        changed: { weakPlayer?.bufferChanged() }))
            } catch {
                fail(error, player)
                return
            }
            ranges = duration > 0 ? [0...duration] : []
        }
        player.publish(seekable: ranges)
        publishAudioTracks(player)
        // A rate set before the load that needs trick play.
        startTrickPlay(at: start, player)

        execute(machine.opened(duration: duration, start: start, startupBuffer: startupBuffer, at: now), player)
    }

    /// Opens an HLS or DASH presentation (remote or local): the manifest, the start position (live: behind the edge
    /// per ``LiveEdgeController/startPosition(window:targetDuration:suggestedDelay:)``), the fetcher and the decoder.
    /// Returns the duration, the start and (an optimized live start) the buffer to start with, or `nil` after a
    /// failure (the player is then in `error`).
    private mutating func openStream(
        _ configuration: PlayerConfiguration, transport: any DataLoading, loading: LoadingConfiguration,
        settings: StreamSession.Configuration, _ player: Player
    ) -> (duration: Double, start: Double, startupBuffer: Double?)? {
        weak let weakPlayer = player
        let session = StreamSession(
            url: configuration.url, transport: transport, loading: loading, settings: settings,
            cmcd: configuration.cmcd, clock: clock, report: { error in weakPlayer?.deliver(error) },
            changed: { weakPlayer?.bufferChanged() })
        // A stop() while the manifest loads cancels it (the queued stop then releases the player).
        player.shared.withLock { $0.opening = session }
        defer { player.shared.withLock { $0.opening = nil } }
        let opening: StreamOpening
        do {
            opening = try session.open()
        } catch {
            if !session.isStopped { execute(machine.fail(error, at: now), player) }
            return nil
        }
        stream = session
        isLive = opening.isLive
        window = opening.window
        machine.setStart(opening.window.lowerBound)
        var start = opening.window.lowerBound
        if opening.isLive {
            let controller = LiveEdgeController(configuration: configuration.live)
            start = controller.startPosition(
                window: opening.window, targetDuration: opening.targetDuration, suggestedDelay: opening.suggestedDelay)
            live = controller
        }
        // A rate that starts in trick play: the video lane fetches nothing until the rate comes back.
        if trickMode(for: player.shared.withLock({ $0.rate })) != nil { session.suspend(true) }
        start = session.start(at: start)
        var startupBuffer: Double?
        if opening.isLive, configuration.live.optimizeLiveStartup {
            startupSaving = StartupSaving(opening: opening, start: start, configuration: configuration)
            startupBuffer = startupSaving?.startupBuffer
        }
        // The forward buffer is the fetched segments; decoded frames are kept for about a second ahead.
        frames.open(
            FrameFeeder(
                decoder: SegmentFrameSource(session: session, audio: sound.format), capacity: 1,
                keyframesOnly: player.asksKeyframesOnly, activity: clock.activity,
                changed: { weakPlayer?.bufferChanged() }))
        return (opening.duration, start, startupBuffer)
    }

    /// Once per step while streaming: tells the fetcher where the playhead is, follows the window, and carries out
    /// the live-edge controller's decisions.
    mutating func followStream(_ player: Player) {
        guard let stream else { return }
        let kind = machine.state.kind
        let current = machine.currentTime(at: now)
        stream.update(playhead: current, rate: machine.clock.rate, startup: kind != .playing && kind != .paused)
        if let failure = stream.buffered(from: current).failure {
            execute(machine.fail(failure, at: now), player)
            return
        }
        guard let latest = stream.window else { return }
        if latest.isLive != isLive || latest.range != window {
            isLive = latest.isLive
            window = latest.range
            if !isLive, machine.clock.duration == 0 { machine.setDuration(latest.range.upperBound) }
            machine.setStart(latest.range.lowerBound)
            player.publish(seekable: [latest.range])
        }
        guard isLive, var controller = live else { return }
        let (decision, warning) = controller.observe(
            position: current, window: latest.range, isPlaying: kind == .playing,
            segmentDuration: latest.targetDuration)
        live = controller
        if let warning { player.deliver(warning) }
        switch decision {
        case .none:
            break
        case .setRate(let factor):
            execute(machine.setCatchUp(factor, at: now), player)
        case .seek(let target):
            seek(to: target, player, byUser: false)
        }
    }

    /// The stream's audio tracks, or a file's audio streams when it has several (empty for muxed stream audio),
    /// with the one playing marked.
    func publishAudioTracks(_ player: Player) {
        player.publish(audioTracks: fileAudio.listed(playing: stream))
    }

    /// Plays another audio track from the playhead on: the audio queued ahead is dropped.
    mutating func selectAudio(_ index: Int, _ player: Player) {
        guard let stream else { return selectFileAudio(index, player) }
        guard let listed = stream.audioTracks, listed.tracks.indices.contains(index),
            index != listed.selected
        else { return }
        // The lane's decoder first: what it decodes from the runs queued until now is the previous track's.
        feeder?.restartAudio()
        stream.selectAudio(index)
        sound.dropHeld()
        publishAudioTracks(player)
    }

    /// Another of a file's audio streams: the decoder switches at its next read, and the source goes back to the
    /// playhead (as a seek does) so the new track is heard from there, not from where reading had got to.
    private mutating func selectFileAudio(_ index: Int, _ player: Player) {
        guard fileAudio.tracks.indices.contains(index), index != fileAudio.selected, let feeder else { return }
        feeder.selectAudioTrack(index)
        sound.dropHeld()
        fileAudio.selected = index
        publishAudioTracks(player)
        switch machine.state.kind {
        case .play, .playing, .pausing, .paused, .buffering, .seeking:
            seek(to: machine.currentTime(at: now), player, byUser: false)
        default:
            break
        }
    }
}
