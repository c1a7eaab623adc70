import FilmstripImaging
import FilmstripMedia
public import FilmstripStreaming
import FilmstripSync
public import Foundation

/// A player for local files and progressive MP4 over http, on the FFmpeg layer.
///
/// ```swift
/// let player = Player()
/// player.onState = { previous, state in print(previous, "->", state) }
/// player.attach(to: myOutput)                                     // or stay headless
/// player.open(config: PlayerConfiguration(with: videoURL))        // opening -> ready -> play -> playing
/// player.seek(42)                                                  // seeking -> play -> playing
/// player.playbackRate = 2
/// ```
///
/// Commands return at once and are carried out in order on the player's engine thread, which also calls the
/// callbacks (`onState`, `onError`, `onStats`, `onSeekableTimeRanges`) and the attached output.
public final class Player: Sendable {
    enum Command: Sendable {
        /// Loads content; with `autoplay`, opens it too once it is ready (a failed load leaves nothing to open).
        case load(PlayerConfiguration, autoplay: Bool?)
        case open(autoplay: Bool)
        case play
        case pause
        case seek(Double)
        case rate(Double)
        case mute(Bool)
        /// Plays another audio track (an index into ``Player/audioTracks``).
        case selectAudio(Int)
        /// The player-level settings changed.
        case reconfigure
        case stop
    }

    struct Callbacks {
        var onState: (@Sendable (PlayerState, PlayerState) -> Void)?
        var onError: (@Sendable (PlayerError) -> Void)?
        var onStats: (@Sendable (PlayerStats) -> Void)?
        var onSeekableTimeRanges: (@Sendable ([ClosedRange<Double>]) -> Void)?
        weak var output: (any VideoOutput)?
        weak var audioOutput: (any AudioOutput)?
        var onAudioTracks: (@Sendable ([AudioTrack]) -> Void)?
        var prepareLicenseRequest: LicenseRequestPreparation?
    }

    struct Shared {
        var commands: [Command] = []
        var state: PlayerState = .idle
        var stats: PlayerStats?
        var rate: Double = 1
        var muted = false
        var volume = 1.0
        /// Settings set on the player itself; they win over each configuration's.
        var overrides = PlayerOverrides()
        var seekable: [ClosedRange<Double>] = []
        /// The content of the last `load` or `open(config:)`.
        var content: PlayerConfiguration?
        var callbacks = Callbacks()
        var shutdown = false
        /// The stream whose manifest the engine is loading, so that `stop()` can cancel it.
        var opening: StreamSession?
        /// The playback clock as the engine last published it.
        var clock = PlaybackClock()
        var audioTracks: [AudioTrack] = []
    }

    let shared = Mutex(Shared())
    /// Signalled on every command; the engine waits on it with a monotonic deadline (a wall-clock wait would stretch
    /// when the system clock is set back).
    let wakeUp = DispatchSemaphore(value: 0)
    /// What the buffers' producers changed (frames decoded, segments fetched, audio decoded, the end, a failure, a
    /// new window), counted, and whether the engine waits for such a change: it is woken by the change itself,
    /// never by looking again.
    let bufferEvents = Mutex((count: 0, awaited: false))
    let ratePolicy: PlaybackRatePolicy
    /// The player's clock: the engine's decisions, the stream's schedule and ``currentTime`` read it.
    let clock: SessionClock
    /// The engine thread's worker in the clock's activity ledger (a clock other than the system's).
    let engineWorker: Int?
    /// Network settings that apply to every player of the SDK (the player's configuration wins field by field).
    let sdkNetwork: NetworkConfiguration?
    /// Receives every error and warning too (the SDK-level `onError`).
    let sdkErrors: (@Sendable (PlayerError) -> Void)?
    private let engineThread: EngineThread

    /// Creates a player for an engine (its rate range comes from `ratePolicy`, by default the engine's).
    ///
    /// - Parameters:
    ///   - network: SDK-wide network settings, overlaid by each configuration's own.
    ///   - errors: an SDK-level error handler that sees every error of this player as well.
    ///   - clock: the clock everything time-dependent reads: the playhead, buffering and state timeouts, the live
    ///     edge, retry waits, reload schedules, statistics ticks and the decoders' pacing. `ContinuousClock()` by
    ///     default. On another clock (a test clock) the player also keeps a ledger of which of its threads and tasks
    ///     work, so the clock's owner can move the clock on whenever all of them wait.
    ///   - date: the wall clock that goes with `clock` (a live stream's window and dates).
    public init(
        ratePolicy: PlaybackRatePolicy = PlaybackRatePolicy(engine: .filmstrip), network: NetworkConfiguration? = nil,
        errors: (@Sendable (PlayerError) -> Void)? = nil, clock: any Clock<Duration> = ContinuousClock(),
        date: @escaping @Sendable () -> Date = { Date() }
    ) {
        let clock = SessionClock(clock, date: date)
        self.clock = clock
        engineWorker = clock.activity?.join("engine")
        self.ratePolicy = ratePolicy
        sdkNetwork = network
        sdkErrors = errors
        engineThread = EngineThread()
        engineThread.start(self)
    }

    deinit {
        shared.withLock { $0.shutdown = true }
        shared.withLock { $0.opening }?.stop()
        signal()
    }

    // MARK: API

    /// The current state.
    public var state: PlayerState { shared.withLock { $0.state } }

    /// Called on every state change with the previous and the new state.
    public var onState: (@Sendable (PlayerState, PlayerState) -> Void)? {
        get { shared.withLock { $0.callbacks.onState } }
        set { shared.withLock { $0.callbacks.onState = newValue } }
    }

    /// Called for warnings, recoverable and fatal errors of this player.
    public var onError: (@Sendable (PlayerError) -> Void)? {
        get { shared.withLock { $0.callbacks.onError } }
        set { shared.withLock { $0.callbacks.onError = newValue } }
    }

    /// Called about once a second while content is loaded.
    public var onStats: (@Sendable (PlayerStats) -> Void)? {
        get { shared.withLock { $0.callbacks.onStats } }
        set { shared.withLock { $0.callbacks.onStats = newValue } }
    }

    /// Called with each ClearKey licence request (``PlayerConfiguration/licenseURL``, or the one a manifest names)
    /// before it is sent, to sign it: add a header, change the URL. Throwing fails the licence (`drm_failed`). Read
    /// when content is opened.
    public var prepareLicenseRequest: LicenseRequestPreparation? {
        get { shared.withLock { $0.callbacks.prepareLicenseRequest } }
        set { shared.withLock { $0.callbacks.prepareLicenseRequest = newValue } }
    }

    /// Called when the seekable ranges change.
    public var onSeekableTimeRanges: (@Sendable ([ClosedRange<Double>]) -> Void)? {
        get { shared.withLock { $0.callbacks.onSeekableTimeRanges } }
        set { shared.withLock { $0.callbacks.onSeekableTimeRanges = newValue } }
    }

    /// The playhead position in seconds, from the playback clock (it moves at the rate while playing).
    public var currentTime: Double {
        shared.withLock { $0.clock }.time(at: clock.now().seconds)
    }

    /// The ranges the playhead may be moved to (for a file: from 0 to the duration).
    public var seekableTimeRanges: [ClosedRange<Double>] { shared.withLock { $0.seekable } }

    /// The latest statistics, or `nil` before any content was opened.
    public func getStats() -> PlayerStats? { shared.withLock { $0.stats } }

    /// Sends decoded frames to `output` (held weakly). Without an output the player runs headless and does not
    /// convert frames to pixels.
    public func attach(to output: any VideoOutput) {
        shared.withLock { $0.callbacks.output = output }
    }

    /// Sends the audio the player plays to `output` (held weakly), in the output's format, from the next content
    /// loaded on. With audio present, the audio clock is the master: frames are presented against it (see
    /// ``PlayerStats/avDrift``). Without an audio output, audio is not decoded.
    public func attach(audio output: any AudioOutput) {
        shared.withLock { $0.callbacks.audioOutput = output }
    }

    /// The playback rate (1 is normal). Values outside the engine's range are clamped and reported as warnings;
    /// audio would be muted below 0 and above 2.
    public var playbackRate: Double {
        get { shared.withLock { $0.rate } }
        set { send(.rate(newValue)) }
    }

    /// The rates ``playbackRate`` may take (the engine's range, or the one the player was made with).
    public var playbackRateRange: ClosedRange<Double> { ratePolicy.range }

    /// Whether the player's audio is muted (set here, or by an autoplay under ``AutoplayPolicy/mutedOnly``);
    /// reported in statistics as `audioMuted`. Muted, the audio output gets silence as long as the time played.
    public var isMuted: Bool {
        get { shared.withLock { $0.muted } }
        set {
            shared.withLock { $0.muted = newValue }
            send(.mute(newValue))
        }
    }

    /// The audio's gain, 0 (silent) to 1 (as decoded, the default); values outside are clamped. It applies to what
    /// is handed to the audio output from now on (a device's queue, a WAV file), on top of ``isMuted``.
    public var volume: Double {
        get { shared.withLock { $0.volume } }
        set {
            let volume = newValue.isFinite ? min(max(newValue, 0), 1) : 1
            shared.withLock { $0.volume = volume }
        }
    }

    /// The URL of the content last given to ``load(config:)`` or ``open(config:)``, nil before.
    public var contentURL: URL? { currentContent?.url }

    /// The content last given to ``load(config:)`` or ``open(config:)`` and the network settings its requests
    /// carry (the SDK's, overridden field by field by the content's), read together.
    public var currentContent: (url: URL, network: NetworkConfiguration)? {
        guard let content = shared.withLock({ $0.content }) else { return nil }
        return (content.url, NetworkConfiguration.merged(sdk: sdkNetwork, player: content.network))
    }

    /// The network settings the player's requests carry: the SDK's, overridden field by field by the current
    /// content's (the SDK's alone before any content). Thumbnails engines made for the player take them too.
    public var networkSettings: NetworkConfiguration {
        currentContent?.network ?? NetworkConfiguration.merged(sdk: sdkNetwork, player: nil)
    }

    /// Prepares content: `idle -> opening -> ready`.
    public func load(config: PlayerConfiguration) {
        send(.load(config, autoplay: nil))
    }
    /// Opens the loaded content; with `autoplay`, playback starts when ready.
    public func open(autoplay: Bool) { send(.open(autoplay: autoplay)) }
    /// Loads and opens `config` with autoplay.
    public func open(config: PlayerConfiguration) {
        send(.load(config, autoplay: true))
    }
    /// Starts or resumes playback.
    public func play() { send(.play) }
    /// Pauses playback.
    public func pause() { send(.pause) }
    /// Moves the playhead to `seconds`: the first frame at or after it is shown next.
    public func seek(_ seconds: Double) { send(.seek(seconds)) }
    /// Releases the content: `-> stopping -> idle`. A stream still loading its manifest is cancelled.
    public func stop() {
        shared.withLock { shared in
            // Commands not yet carried out would act on content that is being released.
            shared.commands.removeAll { command in
                switch command {
                case .rate, .mute, .reconfigure: false
                default: true
                }
            }
            return shared.opening
        }?.stop()
        send(.stop)
    }

    /// Hands an error to the player's and the SDK's `onError` (from any thread).
    func deliver(_ error: PlayerError) {
        shared.withLock { $0.callbacks.onError }?(error)
        sdkErrors?(error)
    }

    func send(_ command: Command) {
        shared.withLock {
            // The content is recorded with its command, so `currentContent` follows the order the engine sees.
            if case .load(let config, _) = command { $0.content = config }
            $0.commands.append(command)
        }
        signal()
    }

    func signal() {
        if let engineWorker { clock.activity?.wake(engineWorker) }
        wakeUp.signal()
    }

    /// A producer changed what the buffers hold: wakes the engine if it waits for that.
    func bufferChanged() {
        let awaited = bufferEvents.withLock { events -> Bool in
            events.count &+= 1
            return events.awaited
        }
        if awaited { signal() }
    }
}

/// Starts the engine on its own thread; the engine holds the player weakly so the player can go away.
final class EngineThread: Sendable {
    func start(_ player: Player) {
        weak let weakPlayer = player
        let clock = player.clock
        let worker = player.engineWorker
        let thread = Thread {
            var engine = PlaybackEngine(clock: clock)
            Activity.$worker.withValue(worker) { engine.run { weakPlayer } }
            if let worker { clock.activity?.leave(worker) }
        }
        thread.name = "filmstrip.player"
        thread.qualityOfService = .userInteractive
        thread.start()
    }
}
