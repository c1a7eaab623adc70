import FilmstripFormats
import FilmstripLoading
import FilmstripStreaming
import Foundation

/// The video lane of a ``StreamSession``: its fetch task's state and decisions. The decisions are value machines
/// (``SegmentScheduler`` for what to fetch, ``RenditionSelector`` with ``BandwidthEstimator`` for the level,
/// ``LiveRefreshSchedule`` for reloads); the lane carries them out through the session's requests
/// (``SessionRequests``) and hands what it loads to the session (the queue the decoder reads, the buffer's end, the
/// window). It lives on the fetch task only; a seek or a stop reaches it through the session's shared state and the
/// lane's wake-up signal.
struct VideoLane {
    private let session: StreamSession
    private var opened: StreamSession.Opened
    private var scheduler: SegmentScheduler
    private var selector: RenditionSelector
    private var estimator = BandwidthEstimator()
    private var segmentsByLevel: [Int: [SegmentReference]]
    private var refresh: LiveRefreshSchedule?
    private var nextReload = Duration.zero
    /// The restart (seek) this lane fetches for; -1 until the first.
    private var generation = -1
    private var finished = false

    init(session: StreamSession, opened: StreamSession.Opened) {
        self.session = session
        self.opened = opened
        scheduler = SegmentScheduler(maxBuffer: session.settings.maxBuffer)
        selector = RenditionSelector(bitrates: opened.ladder.bandwidths, initial: opened.level)
        segmentsByLevel = [opened.level: opened.segments]
        if opened.isLive {
            let cadence: LiveRefreshSchedule.Cadence =
                opened.presentation.streamingProtocol == .hls
                ? .playlist(targetDuration: opened.targetDuration)
                : .manifest(minimumUpdatePeriod: opened.presentation.minimumUpdatePeriod ?? 2)
            let schedule = LiveRefreshSchedule(cadence)
            nextReload = session.clock.now() + schedule.first
            refresh = schedule
        }
    }

    private var clock: SessionClock { session.clock }
    private var wake: WakeSignal { session.wake }

    /// Carries out the decisions until the session stops.
    mutating func run() async {
        while !Task.isCancelled {
            let (seek, generation, playhead, stopped, maxBuffer, suspended) = session.shared.withLock { shared in
                defer { if !shared.suspended { shared.seekRequest = nil } }
                return (
                    shared.suspended ? nil : shared.seekRequest, shared.generation, shared.playhead, shared.stopped,
                    shared.maxBuffer, shared.suspended
                )
            }
            if stopped { return }
            if suspended {
                // Trick play fetches on its own lane meanwhile; turning it off wakes this one.
                await wake.waitForSignal(on: clock)
                continue
            }
            if let maxBuffer { scheduler.maxBuffer = maxBuffer }
            if let seek {
                self.generation = generation
                finished = false
                scheduler = SegmentScheduler(maxBuffer: session.settings.maxBuffer)
                scheduler.seek(to: seek, in: segmentsByLevel[selector.current] ?? [])
            }
            if refresh != nil, clock.now() >= nextReload {
                await reload()
                continue
            }
            await step(playhead: playhead)
        }
    }

    /// One decision of the scheduler, carried out.
    private mutating func step(playhead: Double) async {
        let adaptive = session.settings.streaming.adaptiveBitrate && opened.ladder.levels.count > 1
        let level = adaptive ? selector.next(estimate: estimator.bitsPerSecond) : selector.current
        guard let segments = await segments(of: level) else { return }
        let isLive = refresh != nil
        switch scheduler.next(playhead: playhead, segments: segments, rendition: "\(level)", isLive: isLive) {
        case .fetch(let segment, let newRun):
            await fetch(segment, level: level, newRun: newRun, in: segments)
        case .waitForRoom:
            // The playhead moving on (``StreamSession/update(playhead:rate:startup:)``), a seek, a new bound or a
            // stop wakes the lane.
            await wake.waitForSignal(on: clock)
        case .waitForSegments:
            // A listed live stream waits for its reload; a live template lists what became available since.
            let template = opened.ladder.levels[level].contains {
                if case .template = $0.segments { return true } else { return false }
            }
            if template {
                let pause = min(1, max(0.1, (segments.last?.duration ?? 2) / 4))
                await wake.wait(for: .milliseconds(Int(pause * 1000)), on: clock)
                segmentsByLevel[level] = nil
            } else {
                await wake.wait(for: max(.milliseconds(20), nextReload - clock.now()), on: clock)
            }
        case .finished:
            if !finished {
                // Only for the position this lane fetches for (a seek may have come since it looked).
                finished = session.changeShared { [generation, queue = session.queue] shared in
                    guard shared.generation == generation else { return false }
                    shared.complete = true
                    queue.markComplete()
                    return true
                }
            }
            await wake.waitForSignal(on: clock)
        }
    }

    /// The segments of `level`, loading them when a switch needs them; `nil` (with the switch abandoned) when they
    /// cannot be had.
    private mutating func segments(of level: Int) async -> [SegmentReference]? {
        if let known = segmentsByLevel[level] { return known }
        do throws(PlayerError) {
            let list = try await session.loadSegments(
                level, ladder: opened.ladder, in: opened.presentation, reload: refresh != nil)
            var references = list.references
            if list.isLive, opened.presentation.streamingProtocol == .hls {
                references = opened.placement.place(references)
            }
            if !list.isLive, refresh != nil, opened.presentation.streamingProtocol == .hls {
                refresh = nil  // the playlist ended
            }
            segmentsByLevel[level] = references
            if level == selector.current { publish(references) }
            return references
        } catch {
            if level != selector.current {
                selector.switchFailed()
                session.report(
                    PlayerError(
                        .renditionSwitchFailed, severity: .warning,
                        "the switch to rendition \(level) was abandoned: \(error.message)", underlying: error))
            } else {
                session.fail(error)
                await wake.waitForSignal(on: clock)
            }
            return nil
        }
    }

    /// Fetches one segment (its initialisation section first when it starts a run) with retries, and queues it.
    private mutating func fetch(
        _ segment: SegmentReference, level: Int, newRun: Bool, in segments: [SegmentReference]
    ) async {
        var rendition = opened.ladder.rendition(level, for: segment)
        // Audio-only content's requests say so (CMCD `ot=a`) even when the manifest gives no codecs.
        if session.audioOnly.load(ordering: .relaxed), rendition.codecs == nil, rendition.mimeType == nil {
            rendition.mimeType = "audio/mp4"
        }
        if let next = SegmentScheduler.firstIndex(endingAfter: segment.end, in: segments) {
            session.reporter.update { $0.next = (segment, segments[next]) }
        }
        let started = clock.now()
        let result = await session.requests.segmentBytes(
            segment, of: rendition, newRun: newRun, lane: session.lane(.video))
        let generation = generation
        guard session.shared.withLock({ $0.generation == generation && !$0.stopped }) else { return }
        switch result {
        case .success(let data):
            session.requests.restored()
            let seconds = (clock.now() - started).seconds
            selector.arrived(from: level)
            estimator.add(bytes: data.count, seconds: max(seconds, 1e-4))
            scheduler.fetched(segment, rendition: "\(level)")
            if let committed = segmentsByLevel[level], level != opened.level {
                opened.level = level
                publish(committed)
            }
            // Queued only if no seek came since the check above: checked again under the lock a seek resets the
            // queue under.
            let queued = session.shared.withLock { [queue = session.queue] shared in
                guard shared.generation == generation, !shared.stopped else { return false }
                queue.append(data, newRun: newRun, segment: segment)
                return true
            }
            guard queued else { return }
            let bandwidth = opened.ladder.bandwidths[level]
            let estimate = estimator.bitsPerSecond
            let end = segment.end
            session.changeShared {
                $0.bufferEnd = end
                $0.statistics.bytesLoaded += data.count
                $0.statistics.segmentsLoaded += 1
                $0.statistics.rendition = level
                $0.statistics.bitrate = bandwidth > 0 ? bandwidth : nil
                $0.statistics.bandwidthEstimate = estimate
            }
            session.reporter.update {
                $0.bufferEnd = end
                $0.starvation = false
                $0.throughput = estimate
            }
        case .failure(let error):
            await failed(segment, level: level, error)
        }
    }

    /// A segment that failed after its retries: the scheduler's verdict (abandon a switch, fail, or skip it).
    private mutating func failed(_ segment: SegmentReference, level: Int, _ error: AttemptFailure) async {
        let switching = selector.pending == level
        switch scheduler.failed(
            segment, switching: switching, unreachable: error.connectivity,
            policy: session.settings.streaming.missingSegmentPolicy)
        {
        case .abandonSwitch:
            selector.switchFailed()
            session.report(
                PlayerError(
                    .renditionSwitchFailed, severity: .warning,
                    "the switch to rendition \(level) was abandoned: its segment \(segment.number) failed (\(error.message))",
                    underlying: error))
        case .fail:
            session.fail(
                PlayerError(
                    .sourceUnavailable, severity: .fatal, "segment \(segment.number) failed: \(error.message)",
                    underlying: error.underlying))
            await wake.waitForSignal(on: clock)
        case .skip:
            session.report(
                PlayerError(
                    .segmentSkipped, severity: .warning,
                    "segment \(segment.number) failed and was skipped: \(error.message)",
                    underlying: error.underlying))
            session.changeShared { $0.bufferEnd = segment.end }
        }
    }

    /// Loads the next version of a live presentation: the current level's HLS playlist, or the MPD.
    private mutating func reload() async {
        guard var schedule = refresh else { return }
        let level = selector.current
        let previousLast = segmentsByLevel[level]?.last?.number
        let outcome = await session.requests.attempt(keyURL: nil, once: true, lane: session.lane(.video)) {
            [client = session.client, settings = session.settings, opened] () async throws -> (
                Presentation, RenditionLadder, SegmentList
            ) in
            var presentation = opened.presentation
            // Listed segments come with the manifest itself (an MPD, or a media playlist opened directly): load it
            // again. A variant's media playlist is reloaded on its own.
            let listed = opened.ladder.levels[level].contains { $0.segments.references != nil }
            if listed || presentation.streamingProtocol == .dash { presentation = try await client.refresh() }
            let ladder = try RenditionLadder(presentation, preferredAudioLanguage: settings.preferredAudioLanguage)
            var merged = try await StreamSession.segments(
                of: ladder.levels[min(level, ladder.levels.count - 1)], in: presentation, client: client, reload: true)
            if presentation.streamingProtocol == .dash { merged.isLive = presentation.isLive }
            return (presentation, ladder, merged)
        }
        switch outcome {
        case .success(let (presentation, ladder, list)):
            session.requests.restored()
            if ladder.levels.count == opened.ladder.levels.count {
                opened.presentation = presentation
                opened.ladder = ladder
            }
            if let target = list.targetDuration, presentation.streamingProtocol == .hls {
                opened.targetDuration = target
            }
            var references = list.references
            if opened.presentation.streamingProtocol == .hls {
                references = opened.placement.place(references)
            }
            segmentsByLevel = [level: references]
            publish(references)
            if !list.isLive {
                refresh = nil
                return
            }
            let delay = schedule.loaded(changed: references.last?.number != previousLast)
            nextReload = clock.now() + delay
            refresh = schedule
            wake.signal()
        case .failure(let error):
            let delay = schedule.failed()
            refresh = schedule
            nextReload = clock.now() + delay
            session.report(
                PlayerError(
                    .playlistReloadFailed, severity: .warning,
                    "the live \(opened.presentation.streamingProtocol == .hls ? "playlist" : "MPD") could not be reloaded (\(error.message)); retrying in \(delay)",
                    underlying: error.underlying))
        }
    }

    /// Makes `segments` the current level's: the window, and where a seek begins.
    private func publish(_ segments: [SegmentReference]) {
        guard let first = segments.first, let last = segments.last else { return }
        let isLive = refresh != nil
        // HLS: the target duration; DASH: the newest segment's length (what the window grows by).
        let target = opened.targetDuration > 0 ? opened.targetDuration : last.duration
        session.changeShared {
            $0.window = (first.start...last.end, isLive, target)
            $0.segments = segments
        }
    }
}
