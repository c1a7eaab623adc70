import FilmstripFormats
import FilmstripLoading
import FilmstripStreaming
import FilmstripSync
import Foundation

/// The network half of the engine for HLS and DASH: it opens the presentation through a ``StreamingClient``, then
/// each lane's fetch task carries out its decisions (``VideoLane``: the video segments, the level and live reloads;
/// ``AudioLane``: a separate audio track; ``SegmentChunks``: trick play's chunks), its requests made by
/// ``SessionRequests``, and queues the bytes in a ``SegmentQueue`` that ``SegmentFrameSource`` decodes. Every wait is on the injected clock. Requests carry CMCD through the client's
/// decorator; errors and warnings go to `report` on a serial queue, never under a lock.
final class StreamSession: Sendable {
    /// What the engine and the decoder read while the fetch task runs.
    struct Shared {
        var playhead = 0.0
        /// Where the playhead was when it last woke the lanes (they wait for room in the buffer).
        var wokenPlayhead = 0.0
        var rate = 1.0
        var bufferEnd = 0.0
        var complete = false
        var failure: PlayerError?
        /// A seek the fetch task has not carried out yet, and a counter that tells stale fetches apart.
        var seekRequest: Double?
        var generation = 0
        var window: (range: ClosedRange<Double>, isLive: Bool, targetDuration: Double)?
        /// The current level's segments (for where a seek begins).
        var segments: [SegmentReference] = []
        var stopped = false
        /// The forward buffer's bound (``Player/maxPrebufferTime`` may change it while playing).
        var maxBuffer: Double?
        /// The task loading the manifest, while ``open()`` waits for it.
        var opening: Task<Void, Never>?
        /// Trick play is on: the video lane fetches nothing (``suspend(_:)``).
        var suspended = false
        var statistics = Statistics(bytesLoaded: 0, segmentsLoaded: 0, rendition: 0)
    }

    struct Statistics: Sendable {
        var bitrate: Int?
        var bandwidthEstimate: Double?
        var bytesLoaded: Int
        var segmentsLoaded: Int
        var rendition: Int
    }

    /// Configuration from the player's configuration.
    struct Configuration: Sendable {
        var streaming: StreamingConfiguration
        var maxBuffer: Double
        var keyTimeout: Double?
        /// The player's own retry policy for its requests (see ``SessionRequests/retryPolicy(_:waitsForConnectivity:budget:)``).
        var retry: RetryPolicy
        /// Live: the first segment comes from the lowest level (``LiveConfiguration/optimizeLiveStartup``).
        var optimizeLiveStartup = false
        /// The audio language to choose (``PlayerConfiguration/preferredAudioLanguage``).
        var preferredAudioLanguage: String?
        /// Whether separate audio is fetched (an audio output is attached); the tracks are listed either way.
        var fetchesAudio = false
        /// Keys of protected samples (``PlayerConfiguration/contentKeys``, its licence server).
        var contentKeys: ContentKeySource?
        /// The licence server a manifest names (DASH ClearKey `Laurl`), under the player's network settings: used
        /// when none is configured.
        var manifestLicense: (@Sendable (URL) -> ClearKeyLicense)?
    }

    let url: URL
    let queue: SegmentQueue
    /// The separate audio's lane (see `AudioLane.swift`): its bytes, wake-ups, placement and selection.
    let audioQueue: SegmentQueue
    let audioWake = WakeSignal()
    let audioTimeline = AudioTimeline()
    let audioState = Mutex(AudioLaneState())
    private let audioFetching = Mutex<Task<Void, Never>?>(nil)
    let client: StreamingClient
    /// Every request, with the player's retries and the connectivity warnings.
    let requests: SessionRequests
    let reporter: CmcdReporter
    let settings: Configuration
    let clock: SessionClock
    let shared = Mutex(Shared())
    /// The content is audio alone: its ladder is audio, or the decoder found no video in the first run (an HLS
    /// media playlist of audio segments says nothing of its codecs).
    let audioOnly = Atomic<Bool>(false)
    let wake = WakeSignal()
    /// Trick play's lane: its wake-up signal and its restarts (see `StreamSession+TrickPlay.swift`).
    let trickWake = WakeSignal()
    let trickGeneration = Atomic<Int>(0)
    private let reportQueue: DispatchQueue
    private let deliver: @Sendable (PlayerError) -> Void
    /// Told of each change to what the engine reads of the stream: its buffer's end, completion, failure, window,
    /// and whether audio comes.
    let changed: @Sendable () -> Void
    private let fetching = Mutex<Task<Void, Never>?>(nil)
    /// Set once by ``open()`` before the fetch task starts; read by that task only.
    let opened = Mutex<Opened?>(nil)

    /// What opening found, handed to the fetch task.
    struct Opened: Sendable {
        var presentation: Presentation
        var ladder: RenditionLadder
        var level: Int
        var segments: [SegmentReference]
        var placement: LiveSegmentPlacement
        var isLive: Bool
        var targetDuration: Double
        /// The separate audio, when the presentation has some.
        var audio: AudioPlan?
    }

    init(
        url: URL, transport: any DataLoading, loading: LoadingConfiguration, settings: Configuration,
        cmcd: CmcdConfiguration?, clock: SessionClock = SessionClock(ContinuousClock()),
        report: @escaping @Sendable (PlayerError) -> Void, changed: @escaping @Sendable () -> Void = {}
    ) {
        self.url = url
        self.changed = changed
        self.settings = settings
        self.clock = clock
        queue = SegmentQueue(activity: clock.activity)
        audioQueue = SegmentQueue(activity: clock.activity)
        deliver = report
        let reports = DispatchQueue(label: "filmstrip.player.reports")
        reportQueue = reports
        let reporter = CmcdReporter(configuration: cmcd)
        self.reporter = reporter
        var configuration = loading
        // Each request is run by the session's retry loop with the player's policy (`settings.retry`): on the
        // player's clock, abandoned by a seek or a stop, reporting lost connectivity as it waits. Inside it, the
        // client makes one attempt per call.
        configuration.retry = .none
        configuration.maximumResponseSize = max(configuration.maximumResponseSize, 256 << 20)
        client = StreamingClient(
            url: url, transport: transport, configuration: configuration, now: clock.date,
            decorate: reporter.decorator)
        requests = SessionRequests(
            client: client, retry: settings.retry, keyTimeout: settings.keyTimeout, clock: clock,
            report: { error in reports.async { report(error) } })
        // Until the manifest says otherwise, the sniffer tells the format (for CMCD `sf` on the first request).
        let guess: CmcdData.StreamingFormat = ManifestDetection.kind(of: url) == .dash ? .dash : .hls
        reporter.update { $0.streamingFormat = guess }
    }

    /// Changes what the engine reads of the stream, and tells it.
    @discardableResult
    func changeShared<T: Sendable>(_ body: (inout Shared) -> T) -> T {
        defer { changed() }
        return shared.withLock { body(&$0) }
    }

    /// `which` lane as its requests see it: its wake-up signal, its restart count, and whether the session stopped.
    func lane(_ which: FetchLane) -> SessionRequests.Lane {
        let stopped: @Sendable () -> Bool = { [self] in isStopped }
        return switch which {
        case .video: .init(wake: wake, generation: { [self] in shared.withLock { $0.generation } }, stopped: stopped)
        case .audio:
            .init(wake: audioWake, generation: { [self] in audioState.withLock { $0.generation } }, stopped: stopped)
        case .trick:
            .init(wake: trickWake, generation: { [self] in trickGeneration.load(ordering: .relaxed) }, stopped: stopped)
        }
    }

    /// Hands an error to the player on the report queue, in order.
    func report(_ error: PlayerError) {
        let deliver = deliver
        reportQueue.async { deliver(error) }
    }

    // MARK: Control (engine and decoder threads)

    /// Starts fetching at the segment holding `time`; returns that segment's start (where playback begins).
    @discardableResult
    func start(at time: Double) -> Double {
        let begin = restart(at: time).begin
        fetching.withLock { task in
            guard task == nil else { return }
            guard let opened = opened.withLock({ $0 }) else { return }
            task = Activity.task(clock.activity, name: "video lane") { [self] in
                var lane = VideoLane(session: self, opened: opened)
                await lane.run()
            }
        }
        if settings.fetchesAudio, let plan = opened.withLock({ $0?.audio }) {
            audioFetching.withLock { task in
                guard task == nil else { return }
                task = Activity.task(clock.activity, name: "audio lane") { [self] in
                    var lane = AudioLane(session: self, plan: plan)
                    await lane.run()
                }
            }
        }
        return begin
    }

    /// Which reset of the queues a seek follows: the decoder resumes reading only for it.
    struct ReadToken: Sendable, Hashable {
        var video: Int
        var audio: Int
    }

    /// Drops what is queued and fetches from the segment holding `time` (called by the engine thread, with the
    /// feeder's seek). The decoder's reads fail until its seek is carried out (``resumeReading(after:)``) with the
    /// token returned.
    @discardableResult
    func seek(to time: Double) -> ReadToken {
        restart(at: time, interrupting: true).token
    }

    /// The decoder thread has closed its decoder for a seek: its reads of the new position's bytes may begin, unless
    /// the queues were reset again after the seek's `token` (another seek is coming; until it is carried out, reads
    /// fail). No token: they resume whatever came.
    func resumeReading(after token: ReadToken? = nil) {
        queue.resume(epoch: token?.video)
        audioQueue.resume(epoch: token?.audio)
    }

    @discardableResult
    private func restart(at time: Double, interrupting: Bool = false) -> (begin: Double, token: ReadToken) {
        var token = ReadToken(video: 0, audio: 0)
        // Each queue is reset under the lock that holds its generation: a fetch for the previous position checks its
        // generation and queues its bytes (or the end) under that same lock, so nothing of it lands in the queue of
        // the new position (a decoder would read it as the new run's data).
        let begin = shared.withLock { shared -> Double in
            token.video = queue.reset(interrupting: interrupting)
            shared.generation += 1
            shared.seekRequest = time
            shared.complete = false
            shared.failure = nil
            shared.bufferEnd = SegmentScheduler.start(of: time, in: shared.segments)
            shared.playhead = shared.bufferEnd
            shared.wokenPlayhead = shared.bufferEnd
            return shared.bufferEnd
        }
        audioState.withLock {
            token.audio = audioQueue.reset(interrupting: interrupting)
            $0.seekRequest = begin
            $0.generation += 1
        }
        wake.signal()
        audioWake.signal()
        return (begin, token)
    }

    func interrupt() {
        queue.interrupt()
        audioQueue.interrupt()
    }

    /// Bounds the forward buffer from now on.
    func setMaxBuffer(_ seconds: Double) {
        shared.withLock { $0.maxBuffer = seconds }
        wake.signal()
    }

    /// Whether ``stop()`` was called.
    var isStopped: Bool { shared.withLock { $0.stopped } }

    func stop() {
        let opening = shared.withLock { shared in
            shared.stopped = true
            return shared.opening
        }
        opening?.cancel()
        client.cancel()
        queue.stop()
        audioQueue.stop()
        fetching.withLock { $0?.cancel() }
        audioFetching.withLock { $0?.cancel() }
        wake.signal()
        audioWake.signal()
        trickWake.signal()
    }

    /// The engine's view, once per step: where the playhead is, the rate, and whether the player is starting up.
    func update(playhead: Double, rate: Double, startup: Bool) {
        // The lanes wait for room in the forward buffer: every quarter second the playhead moves (either way) wakes them.
        let wakeUp = shared.withLock { shared -> Bool in
            shared.playhead = playhead
            shared.rate = rate
            guard abs(playhead - shared.wokenPlayhead) >= 0.25 else { return false }
            shared.wokenPlayhead = playhead
            return true
        }
        reporter.update {
            $0.playhead = playhead
            $0.rate = rate
            $0.startup = startup
        }
        if wakeUp {
            wake.signal()
            audioWake.signal()
        }
    }

    /// The forward buffer ran dry (CMCD `bs` on the next request).
    func markStarvation() { reporter.update { $0.starvation = true } }

    /// Seconds fetched ahead of `position`, whether everything up to the end is fetched, and a fatal failure.
    func buffered(from position: Double) -> (seconds: Double, complete: Bool, failure: PlayerError?) {
        shared.withLock { (max(0, $0.bufferEnd - position), $0.complete, $0.failure) }
    }

    /// The live window (first segment start to last segment end), and whether the stream is live.
    var window: (range: ClosedRange<Double>, isLive: Bool, targetDuration: Double)? { shared.withLock { $0.window } }

    var statistics: Statistics { shared.withLock { $0.statistics } }

    /// Marks the stream failed for the decoder and the engine.
    func fail(_ error: PlayerError) {
        changeShared { $0.failure = error }
        queue.fail(error)
    }
}
