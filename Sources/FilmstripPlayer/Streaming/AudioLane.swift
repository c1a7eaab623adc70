import FilmstripFormats
import FilmstripMedia
import FilmstripStreaming
import FilmstripSync
import Foundation

/// The separate audio of a presentation (HLS `EXT-X-MEDIA TYPE=AUDIO` renditions with a `URI`, DASH audio
/// AdaptationSets): the tracks to choose from and, per track, the rendition of each period to fetch.
struct AudioPlan: Sendable {
    /// The audio tracks (of the first period that has any), as the player lists them.
    var tracks: [Presentation.Track]
    /// For each of ``tracks``, the rendition to fetch in every period (the best one of the matching track).
    var renditions: [[Presentation.Rendition]]

    /// `nil` when the presentation has no separate audio.
    init?(_ presentation: Presentation) {
        let periods = presentation.periods.map { period in
            period.tracks.filter { $0.kind == .audio && !$0.renditions.isEmpty }
        }
        guard let first = periods.first(where: { !$0.isEmpty }) else { return nil }
        tracks = first
        renditions = first.map { track in
            periods.compactMap { candidates -> Presentation.Rendition? in
                // The same track in each period: itself, else one with its id, language and name, else its language,
                // else the choice rule. (HLS renditions of one group share the group's id.)
                let match =
                    candidates.first { $0 == track }
                    ?? candidates.first { $0.id == track.id && $0.language == track.language && $0.name == track.name }
                    ?? candidates.first { $0.language != nil && $0.language == track.language }
                    ?? AudioTrackSelection.choose(candidates, preferredLanguage: track.language).map { candidates[$0] }
                guard let match else { return nil }
                var best = match.renditions.max { $0.bandwidth < $1.bandwidth }!
                // Requests name it as audio (CMCD `ot=a`) even when the manifest gives no codecs.
                if best.codecs == nil, best.mimeType == nil { best.mimeType = "audio/mp4" }
                return best
            }
        }
    }

    /// The rendition of `track` that `segment` belongs to (by its period).
    func rendition(_ track: Int, for segment: SegmentReference) -> Presentation.Rendition {
        let periods = renditions[track]
        return periods[min(max(0, segment.discontinuitySequence), periods.count - 1)]
    }
}

/// Where HLS renditions sit on the timeline: renditions share the media clock, so the offset the video's runs found
/// (timeline = media time + offset, per discontinuity sequence) places the audio's runs too. The audio decoder waits
/// here for the video to find it.
final class AudioTimeline: Sendable {
    private struct State {
        var offsets: [Int: Double] = [:]
        /// Threads waiting for an offset: each one's wake-up, and its worker in the activity ledger (marked busy
        /// before it is woken).
        var waiters: [(semaphore: DispatchSemaphore, worker: (activity: Activity, id: Int)?)] = []
    }

    private let state = Mutex(State())

    func publish(offset: Double, sequence: Int) {
        state.withLock {
            $0.offsets[sequence] = offset
            Self.wake(&$0)
        }
    }

    func offset(sequence: Int) -> Double? { state.withLock { $0.offsets[sequence] } }

    /// Wakes every waiter (a restart or a stop: they look whether to go on waiting).
    func wakeWaiters() { state.withLock { Self.wake(&$0) } }

    /// Blocks the calling thread until the offset of `sequence` is published, `deadline` passes on `clock`, or
    /// `abandoned` holds after a wake-up (``wakeWaiters()``); the offset, if there is one by then.
    func awaitOffset(
        sequence: Int, until deadline: Duration, on clock: SessionClock, abandoned: () -> Bool
    ) -> Double? {
        let worker = clock.activity.flatMap { activity in Activity.worker.map { (activity, $0) } }
        while clock.now() < deadline, !abandoned() {
            let semaphore = DispatchSemaphore(value: 0)
            // Registered (and parked) in the same critical section that saw no offset: a publish after it wakes us.
            let known = state.withLock { state -> Double? in
                if let offset = state.offsets[sequence] { return offset }
                state.waiters.append((semaphore, worker))
                if let worker { worker.0.park(worker.1, until: deadline) }
                return nil
            }
            if let known { return known }
            clock.block(until: deadline, on: semaphore)
            state.withLock { $0.waiters.removeAll { $0.semaphore === semaphore } }
        }
        return offset(sequence: sequence)
    }

    private static func wake(_ state: inout State) {
        for waiter in state.waiters {
            if let worker = waiter.worker { worker.activity.wake(worker.id) }
            waiter.semaphore.signal()
        }
        state.waiters.removeAll()
    }
}

/// What the audio fetch task and the decoder share with the engine.
struct AudioLaneState: Sendable {
    var selection = 0
    /// Where the audio fetch starts over (a seek, a track switch), not yet carried out.
    var seekRequest: Double?
    /// Bumped by every restart, so stale fetches and decoded audio are dropped.
    var generation = 0
    /// The track's segments could not be listed (reported once; tried again every few seconds).
    var unavailable = false
}

extension StreamSession {
    /// The audio tracks, with the index of the one playing (`nil` without separate audio).
    var audioTracks: (tracks: [Presentation.Track], selected: Int)? {
        guard let plan = opened.withLock({ $0?.audio }) else { return nil }
        return (plan.tracks, audioState.withLock { $0.selection })
    }

    /// Plays `track` from the playhead on.
    func selectAudio(_ track: Int) {
        guard let plan = opened.withLock({ $0?.audio }), plan.tracks.indices.contains(track) else { return }
        let playhead = shared.withLock { $0.playhead }
        audioState.withLock {
            audioQueue.reset()
            $0.selection = track
            $0.seekRequest = playhead
            $0.generation += 1
        }
        audioWake.signal()
    }
}

/// The audio lane of a ``StreamSession``: the chosen track's segments from the playhead on, as far ahead as the
/// video's buffer allows, on the lane's own fetch task. A segment that still fails after the retries is skipped with
/// a warning, and a track whose segments cannot be listed is tried again every few seconds: audio never stalls
/// playback. A seek or a track change reaches the lane through ``AudioLaneState`` and its wake-up signal.
struct AudioLane {
    private let session: StreamSession
    private let plan: AudioPlan
    private var scheduler: SegmentScheduler
    private var segments: [SegmentReference] = []
    /// The track whose segments are listed; -1 before the first listing.
    private var loaded = -1
    /// The restart (seek, track change) this lane fetches for; -1 until the first.
    private var generation = -1
    private var finished = false

    init(session: StreamSession, plan: AudioPlan) {
        self.session = session
        self.plan = plan
        scheduler = SegmentScheduler(maxBuffer: session.settings.maxBuffer)
    }

    private var wake: WakeSignal { session.audioWake }
    private var clock: SessionClock { session.clock }

    /// Carries out the decisions until the session stops.
    mutating func run() async {
        while !Task.isCancelled {
            let (playhead, stopped, maxBuffer, isLive, suspended) = session.shared.withLock {
                ($0.playhead, $0.stopped, $0.maxBuffer, $0.window?.isLive ?? false, $0.suspended)
            }
            if stopped { return }
            if suspended {
                // Trick play: no audio is played, so none is fetched until the rate comes back (which wakes the lane).
                await wake.waitForSignal(on: clock)
                continue
            }
            if let maxBuffer { scheduler.maxBuffer = maxBuffer }
            let (selection, current) = session.audioState.withLock { ($0.selection, $0.generation) }
            if loaded != selection || (isLive && segments.isEmpty) {
                // The restart waits (kept in the state) until the track is listed.
                guard let list = await listSegments(plan.renditions[selection], live: isLive) else { continue }
                segments = list
                loaded = selection
            }
            // Taken only for the generation just read: a restart since then is seen on the next turn.
            let seek = session.audioState.withLock { state -> Double? in
                guard state.generation == current else { return nil }
                defer { state.seekRequest = nil }
                return state.seekRequest
            }
            if let seek {
                generation = current
                finished = false
                scheduler = SegmentScheduler(maxBuffer: session.settings.maxBuffer)
                scheduler.seek(to: seek, in: segments)
            }
            // A restart whose segments are not listed yet, or one that came meanwhile: the next turn takes it.
            guard generation == current else { continue }
            await step(playhead: playhead, isLive: isLive, selection: selection)
        }
    }

    /// One decision of the scheduler, carried out.
    private mutating func step(playhead: Double, isLive: Bool, selection: Int) async {
        switch scheduler.next(playhead: playhead, segments: segments, rendition: "audio", isLive: isLive) {
        case .fetch(let segment, let newRun):
            let result = await session.requests.segmentBytes(
                segment, of: plan.rendition(selection, for: segment), newRun: newRun, lane: session.lane(.audio))
            guard !session.isStopped else { return }
            let generation = generation
            switch result {
            case .success(let data):
                // Queued only if no seek or track change came meanwhile (checked under the lock they reset under).
                let current = session.audioState.withLock { [queue = session.audioQueue] state in
                    guard state.generation == generation else { return false }
                    queue.append(data, newRun: newRun, segment: segment)
                    return true
                }
                guard current else { return }
                scheduler.fetched(segment, rendition: "audio")
                session.shared.withLock { $0.statistics.bytesLoaded += data.count }
            case .failure(let error):
                guard session.audioState.withLock({ $0.generation == generation }) else { return }
                session.report(
                    PlayerError(
                        .segmentSkipped, severity: .warning,
                        "audio segment \(segment.number) failed and was skipped: \(error.message)",
                        underlying: error.underlying))
                scheduler.skipped(segment)
            }
        case .waitForRoom:
            // The playhead moving on, a seek, a track change or a stop wakes the lane.
            await wake.waitForSignal(on: clock)
        case .waitForSegments:
            // Live: list again what became available.
            await wake.wait(for: .milliseconds(500), on: clock)
            segments = []
        case .finished:
            if !finished {
                let generation = generation
                finished = session.audioState.withLock { [queue = session.audioQueue] state in
                    guard state.generation == generation else { return false }
                    queue.markComplete()
                    return true
                }
            }
            await wake.waitForSignal(on: clock)
        }
    }

    /// The segments of one audio track across every period; `nil` (reported, retried later) when they cannot be
    /// had.
    private func listSegments(_ renditions: [Presentation.Rendition], live: Bool) async -> [SegmentReference]? {
        guard let presentation = session.opened.withLock({ $0?.presentation }) else { return nil }
        let result = await session.requests.attempt(keyURL: nil, lane: session.lane(.audio)) {
            [client = session.client] in
            try await StreamSession.segments(of: renditions, in: presentation, client: client, reload: live)
        }
        switch result {
        case .success(var list):
            session.audioState.withLock { $0.unavailable = false }
            if list.isLive, presentation.streamingProtocol == .hls {
                list.references = session.opened.withLock { $0?.placement.place(list.references) } ?? list.references
            }
            return list.references
        case .failure(let error):
            let first = session.audioState.withLock { state in
                defer { state.unavailable = true }
                return !state.unavailable
            }
            // The engine stops waiting for audio that will not come.
            session.changed()
            if first {
                session.report(
                    PlayerError(
                        .audioUnavailable, severity: .warning,
                        "the audio track's segments cannot be listed (\(error.message)); the video plays without it",
                        underlying: error.underlying))
            }
            await wake.wait(for: .seconds(2), on: clock)
            return nil
        }
    }
}
