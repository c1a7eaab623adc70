import ArgumentParser
import Filmstrip
import FilmstripSync
import FilmstripWindow
import Foundation

struct PlayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play a video headless and print the player's events.",
        discussion: """
            Prints one line per event: state changes, statistics once a second, and errors (one JSON object per \
            line with --json). Exits 0 when playback ends or after --duration, 1 after a fatal error (also printed on standard error).

            HLS playlists and DASH MPDs (http(s) or local) play on the streaming engine (VOD and live, adaptive \
            bitrate, CMCD); files and progressive MP4 through FFmpeg.

            Examples:
              filmstrip play movie.mp4 --autoplay --rate 2 --seek 30@1 --duration 5 --json
              filmstrip play movie.mp4 --autoplay --rate 1.5 --audio-out played.wav
              filmstrip play https://example.com/master.m3u8 --window

            With --window the video plays in a window with its sound on the audio device. Keys: space \
            play/pause, left/right 5 s, up/down volume, m mute, [ and ] rate, a next audio track, i statistics, \
            f fullscreen (or a double click), q quit. The pointer at the bottom shows the seek bar; hovering shows \
            the preview for that time (the stream's image track, --thumbnails, else its keyframes); a click or a \
            drag seeks. Closing the window exits 0.
              filmstrip play https://example.com/live/master.m3u8 --autoplay --cmcd query --session-id s1 \
                --header "Authorization: Bearer t" --live-edge-delay 6 --chase speedup --duration 60
            """
    )

    @Argument(help: "Path or URL of the video: a file, a progressive MP4 over http, an HLS playlist or a DASH MPD.")
    var video: String

    @Flag(
        help:
            "Start playing as soon as the content is ready (otherwise it waits paused; with --window it plays unless --paused is given)."
    )
    var autoplay = false

    @Flag(help: "With --window: open paused (space starts playing).")
    var paused = false

    /// Whether playback starts once the content is ready: asked for with --autoplay; in a window, unless --paused
    /// (a window that opens paused looks broken).
    var startsPlaying: Bool { autoplay || (window && !paused) }

    @Option(
        parsing: .unconditional,
        help:
            "Playback rate: above 2 keyframes only (I-frames when the stream has an I-frame track), below 0 backwards (the engine's range is widened to include it).",
        transform: { text in
            guard let value = Double(text), value.isFinite else { throw ValidationError("--rate takes a number") }
            return value
        })
    var rate: Double?

    @Option(
        help: "Seek to T seconds, or to T when AT seconds have passed (T@AT). Repeatable.",
        transform: { text in
            let parts = text.split(separator: "@").map { Double($0) }
            guard (1...2).contains(parts.count), parts.allSatisfy({ $0 != nil }) else {
                throw ValidationError("--seek takes T or T@AT (seconds)")
            }
            return SeekRequest(target: parts[0]!, at: parts.count == 2 ? parts[1]! : 0)
        })
    var seek: [SeekRequest] = []

    @Option(help: "Stop after this many seconds.")
    var duration: Double?

    @Flag(help: "Print one JSON object per line.")
    var json = false

    @OptionGroup var network: NetworkOptions

    @OptionGroup var keys: KeyOptions

    @Option(help: "Send CMCD data: headers or query.")
    var cmcd: CmcdMode?

    @Option(name: .customLong("session-id"), help: "CMCD session id (sid); a UUID by default.")
    var sessionID: String?

    @Option(name: .customLong("content-id"), help: "CMCD content id (cid).")
    var contentID: String?

    @Option(
        help: "An HTTP header for every request, \"Name: value\". Repeatable.",
        transform: { text in
            let parts = text.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, !parts[0].trimmingCharacters(in: .whitespaces).isEmpty else {
                throw ValidationError("--header takes \"Name: value\"")
            }
            return (parts[0].trimmingCharacters(in: .whitespaces), parts[1].trimmingCharacters(in: .whitespaces))
        })
    var header: [(String, String)] = []

    @Option(name: .customLong("live-edge-delay"), help: "Live: seconds behind the live edge to start at.")
    var liveEdgeDelay: Double?

    @Option(help: "Live: catch up with the edge: disabled, skip or speedup.")
    var chase: ChaseMode?

    @Option(name: .customLong("min-prebuffer"), help: "Seconds to buffer before starting (default 2).")
    var minPrebuffer: Double?

    @Option(name: .customLong("max-prebuffer"), help: "Seconds to buffer ahead at most (default 30).")
    var maxPrebuffer: Double?

    @Option(
        name: .customLong("audio-out"),
        help:
            "Write the audio played to this WAV file (48 kHz stereo, 16-bit): silence while muted or at rates above 2.")
    var audioOut: String?

    @Option(
        name: .customLong("audio-language"),
        help: "The audio language to play, a BCP 47 tag (fr, en-US; eng matches en), among a stream's audio renditions."
    )
    var audioLanguage: String?

    @Flag(help: "Show the video in a window and play its sound on the audio device (needs a display).")
    var window = false

    @Option(
        help:
            "With --window: the preview track the seek bar shows (WebVTT, HLS image playlist, MPD tiles, BIF, storyboard JSON); by default the stream's own image track, else its keyframes."
    )
    var thumbnails: String?

    func validate() throws {
        if thumbnails != nil, !window { throw ValidationError("--thumbnails needs --window") }
        if audioOut != nil, window { throw ValidationError("--audio-out and --window cannot be used together") }
        if paused, !window {
            throw ValidationError("--paused needs --window (without it, playback waits unless --autoplay)")
        }
        if paused, autoplay { throw ValidationError("--paused and --autoplay cannot be used together") }
    }

    enum CmcdMode: String, ExpressibleByArgument, CaseIterable {
        case headers, query
    }

    enum ChaseMode: String, ExpressibleByArgument, CaseIterable {
        case disabled, skip, speedup

        var mode: LiveConfiguration.Chase {
            switch self {
            case .disabled: .disabled
            case .skip: .skipFrames
            case .speedup: .speedupPlayback
            }
        }
    }

    /// The player configuration the options describe.
    func configuration() throws -> PlayerConfiguration {
        var configuration = PlayerConfiguration(with: resourceURL(video))
        if let cmcd {
            var settings = CmcdConfiguration(contentID: contentID, mode: cmcd == .query ? .query : .headers)
            if let sessionID { settings.sessionID = sessionID }
            configuration.cmcd = settings
        } else if sessionID != nil || contentID != nil {
            throw ValidationError("--session-id and --content-id need --cmcd headers|query")
        }
        if !header.isEmpty || network.denyPrivateAddresses || keys.licenseURL != nil {
            configuration.network = NetworkConfiguration(
                httpAdditionalHeaders: header.isEmpty ? nil : Dictionary(header, uniquingKeysWith: { _, last in last }),
                timeoutIntervalForDrmAcquisitionMs: Int(keys.licenseTimeout * 1000), addressPolicy: network.policy)
        }
        if !keys.keys.isEmpty { configuration.contentKeys = keys.keys }
        configuration.licenseURL = keys.license(policy: network.policy)?.url
        if let liveEdgeDelay { configuration.live.liveEdgeDelay = liveEdgeDelay }
        if let chase { configuration.live.chaseLiveEdge = chase.mode }
        if let minPrebuffer { configuration.minPrebufferTime = minPrebuffer }
        if let maxPrebuffer { configuration.maxPrebufferTime = maxPrebuffer }
        configuration.preferredAudioLanguage = audioLanguage
        return configuration
    }

    struct SeekRequest {
        var target: Double
        var at: Double
    }

    func run() async throws {
        let started = Date()
        let output = EventPrinter(json: json, started: started)
        // The engine's range widened to include the rate asked for.
        let range = PlayerEngine.filmstrip.defaultRateRange
        let player = Player(
            ratePolicy: PlaybackRatePolicy(
                engine: .filmstrip, range: min(range.lowerBound, rate ?? 0)...max(range.upperBound, rate ?? 0)))
        let audio = try audioOut.map { try WAVFileOutput(url: URL(fileURLWithPath: $0)) }
        defer { audio?.close() }
        if let audio { player.attach(audio: audio) }
        let screen = try window ? openWindow(for: player, events: output) : nil
        defer { screen?.close() }
        player.onAudioTracks = { tracks in
            guard !tracks.isEmpty else { return }
            output.emit(
                "audio_tracks",
                [
                    (
                        "tracks",
                        .array(
                            tracks.map { track in
                                .object([
                                    ("language", track.language.map { .string($0) } ?? .null),
                                    ("name", track.name.map { .string($0) } ?? .null),
                                    ("selected", .bool(track.isSelected)),
                                ])
                            })
                    )
                ],
                text: "audio: "
                    + tracks.map { "\($0.language ?? "und")\($0.isSelected ? " (playing)" : "")" }.joined(
                        separator: ", "))
        }
        let fatal = Mutex(false)
        player.onState = { previous, state in
            output.emit(
                "state", [("from", .string(previous.kind.rawValue)), ("to", .string(state.kind.rawValue))],
                text: "\(previous.kind.rawValue) -> \(state.kind.rawValue)")
        }
        player.onError = { error in
            if error.severity == .fatal {
                fatal.withLock { $0 = true }
                // Also on standard error, like every other command's failure.
                printError("\(error.type.rawValue): \(error.message)")
            }
            output.emit(
                "error",
                [
                    ("severity", .string(error.severity.rawValue)), ("type", .string(error.type.rawValue)),
                    ("message", .string(error.message)),
                ],
                text: "\(error.severity.rawValue) \(error.type.rawValue): \(error.message)")
        }
        let finalStats = Mutex(false)
        player.onStats = { [weak player] stats in
            defer { if stats.state == .ended || stats.state == .paused { finalStats.withLock { $0 = true } } }
            output.emit(
                "stats",
                [
                    ("state", .string(stats.state.rawValue)), ("position", .double(round3(stats.position))),
                    ("duration", .double(round3(stats.duration))), ("rate", .double(stats.playbackRate)),
                    ("decoded_frames", .int(stats.decodedFrames)), ("presented_frames", .int(stats.presentedFrames)),
                    ("dropped_frames", .int(stats.droppedFrames)), ("bytes_read", .int(stats.bytesRead)),
                    ("startup_time", stats.startupTime.map { .double(round3($0)) } ?? .null),
                    ("buffer", .double(round3(stats.bufferLength))), ("rebuffers", .int(stats.rebufferCount)),
                    ("rebuffer_time", .double(round3(stats.rebufferTime))),
                    ("bitrate", stats.bitrate.map { .int($0) } ?? .null),
                    ("bandwidth_estimate", stats.bandwidthEstimate.map { .int(Int($0)) } ?? .null),
                    ("segments", .int(stats.segmentsLoaded)), ("live", .bool(stats.isLive)),
                    ("live_latency", stats.liveLatency.map { .double(round3($0)) } ?? .null),
                    ("keyframes_only", .bool(stats.keyframesOnly)), ("audio_only", .bool(stats.audioOnly)),
                    ("audio_played", .double(round3(stats.audioPlayed))),
                    ("audio_silence", .double(round3(stats.audioSilence))),
                    ("av_drift", stats.avDrift.map { .double(round3($0)) } ?? .null),
                    ("muted", .bool(stats.audioMuted)), ("volume", .double(round3(player?.volume ?? 1))),
                ],
                text: String(
                    format: "position %.3f / %.3f s, rate %g, ", stats.position, stats.duration, stats.playbackRate)
                    + (stats.audioOnly
                        ? String(format: "audio only, %.1f s heard", stats.audioPlayed - stats.audioSilence)
                        : String(format: "%d frames shown, %d dropped", stats.presentedFrames, stats.droppedFrames))
                    + String(format: ", buffer %.1f s", stats.bufferLength)
                    + (stats.bitrate.map { String(format: ", %d kbps", $0 / 1000) } ?? "")
                    + (stats.bandwidthEstimate.map { String(format: ", estimate %.0f kbps", $0 / 1000) } ?? ""))
        }
        var seeks = seek.sorted { $0.at < $1.at }
        // Seeks at 0 go right after the open; a reverse rate comes after them (so it starts from their target).
        let initial = seeks.prefix { $0.at <= 0 }
        seeks.removeFirst(initial.count)
        let reverseAfterSeek = (rate ?? 0) < 0 && !initial.isEmpty
        if let rate, !reverseAfterSeek { player.playbackRate = rate }
        player.load(config: try configuration())
        player.open(autoplay: startsPlaying)
        if let screen { loadPreviews(into: screen, for: player, events: output) }
        for request in initial { player.seek(request.target) }
        if let rate, reverseAfterSeek { player.playbackRate = rate }
        while true {
            let elapsed = Date().timeIntervalSince(started)
            while let next = seeks.first, next.at <= elapsed {
                seeks.removeFirst()
                player.seek(next.target)
            }
            if let screen, screen.isClosed {
                try await stop(player)
                return
            }
            if fatal.withLock({ $0 }) || player.state.kind == .error {
                try await stop(player)
                throw ExitCode(1)
            }
            // The end, or (backwards) the start where reverse playback paused.
            let backAtStart =
                (rate ?? 1) < 0 && startsPlaying && player.state.kind == .paused
                && player.currentTime <= (player.seekableTimeRanges.first?.lowerBound ?? 0) + 0.05
            if player.state.kind == .ended || backAtStart, seeks.isEmpty {
                // The statistics of the end come right after the state: print them before exiting.
                for _ in 0..<100 where !finalStats.withLock({ $0 }) { try await Task.sleep(nanoseconds: 10_000_000) }
                return
            }
            if let duration, elapsed >= duration {
                try await stop(player)
                return
            }
            // Wake for the next seek or the end of --duration, and at least every 50 ms to notice the end.
            var pause = 0.05
            if let next = seeks.first { pause = min(pause, max(0.001, next.at - elapsed)) }
            if let duration { pause = min(pause, max(0.001, duration - elapsed)) }
            try await Task.sleep(nanoseconds: UInt64(pause * 1e9))
        }
    }
}

/// Stops the player and waits until it is idle (the release is over and its state printed), at most a little past
/// the `stopping` timeout.
private func stop(_ player: Player) async throws {
    player.stop()
    let deadline = Date().addingTimeInterval(15)
    while player.state.kind != .idle, Date() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
}

private func round3(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }

/// Prints events from the player's thread, one line each.
final class EventPrinter: Sendable {
    let json: Bool
    let started: Date
    private let lock = Mutex(())

    init(json: Bool, started: Date) {
        self.json = json
        self.started = started
    }

    func emit(_ event: String, _ fields: [(String, JSON)], text: String) {
        let t = (Date().timeIntervalSince(started) * 1000).rounded() / 1000
        let line =
            json
            ? JSON.object([("t", .double(t)), ("event", .string(event))] + fields).text
            : String(format: "%8.3f  %@  %@", t, event.padding(toLength: 5, withPad: " ", startingAt: 0), text)
        // Unbuffered, so each event is on stdout as it happens.
        lock.withLock { _ in FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
    }
}
