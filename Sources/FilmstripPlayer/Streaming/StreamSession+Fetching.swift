import FilmstripFormats
import FilmstripLoading
import FilmstripStreaming
import Foundation

extension StreamSession {
    /// The fetch task's own state: the decision values and what it has loaded. Lives on the task only.
    private struct Loop {
        var opened: Opened
        var scheduler: SegmentScheduler
        var selector: RenditionSelector
        var estimator = BandwidthEstimator()
        var segmentsByLevel: [Int: [SegmentReference]]
        var refresh: LiveRefreshSchedule?
        var nextReload = Duration.zero
        var generation = -1
        var finished = false
    }

    /// The fetch task: carries out the scheduler's decisions until stopped.
    func run() async {
        guard let opened = opened.withLock({ $0 }) else { return }
        var loop = Loop(
            opened: opened, scheduler: SegmentScheduler(maxBuffer: settings.maxBuffer),
            selector: RenditionSelector(bitrates: opened.ladder.bandwidths, initial: opened.level),
            segmentsByLevel: [opened.level: opened.segments])
        if opened.isLive {
            let cadence: LiveRefreshSchedule.Cadence =
                opened.presentation.streamingProtocol == .hls
                ? .playlist(targetDuration: opened.targetDuration)
                : .manifest(minimumUpdatePeriod: opened.presentation.minimumUpdatePeriod ?? 2)
            let schedule = LiveRefreshSchedule(cadence)
            loop.nextReload = clock.now() + schedule.first
            loop.refresh = schedule
        }
        while !Task.isCancelled {
            let (seek, generation, playhead, stopped, maxBuffer, suspended) = shared.withLock { shared in
                defer { if !shared.suspended { shared.seekRequest = nil } }
                return (
                    shared.suspended ? nil : shared.seekRequest, shared.generation, shared.playhead, shared.stopped,
                    shared.maxBuffer, shared.suspended
                )
            }
            if stopped { return }
            if suspended {
                // Trick play fetches on its own lane meanwhile.
                await wake.wait(for: .milliseconds(500), on: clock)
                continue
            }
            if let maxBuffer { loop.scheduler.maxBuffer = maxBuffer }
            if let seek {
                loop.generation = generation
                loop.finished = false
                loop.scheduler = SegmentScheduler(maxBuffer: settings.maxBuffer)
                loop.scheduler.seek(to: seek, in: loop.segmentsByLevel[loop.selector.current] ?? [])
            }
            if loop.refresh != nil, clock.now() >= loop.nextReload {
                await reload(&loop)
                continue
            }
            await step(&loop, playhead: playhead)
        }
    }

    /// One decision of the scheduler, carried out.
    private func step(_ loop: inout Loop, playhead: Double) async {
        let adaptive = settings.streaming.adaptiveBitrate && loop.opened.ladder.levels.count > 1
        let level = adaptive ? loop.selector.next(estimate: loop.estimator.bitsPerSecond) : loop.selector.current
        guard let segments = await segments(of: level, &loop) else { return }
        let isLive = loop.refresh != nil
        switch loop.scheduler.next(playhead: playhead, segments: segments, rendition: "\(level)", isLive: isLive) {
        case .fetch(let segment, let newRun):
            await fetch(segment, level: level, newRun: newRun, in: segments, &loop)
        case .waitForRoom:
            await wake.wait(for: .milliseconds(500), on: clock)
        case .waitForSegments:
            // A listed live stream waits for its reload; a live template lists what became available since.
            let template = loop.opened.ladder.levels[level].contains {
                if case .template = $0.segments { return true } else { return false }
            }
            if template {
                let pause = min(1, max(0.1, (segments.last?.duration ?? 2) / 4))
                await wake.wait(for: .milliseconds(Int(pause * 1000)), on: clock)
                loop.segmentsByLevel[level] = nil
            } else {
                await wake.wait(for: max(.milliseconds(20), loop.nextReload - clock.now()), on: clock)
            }
        case .finished:
            if !loop.finished {
                // Only for the position this loop fetches for (a seek may have come since it looked).
                loop.finished = changeShared { shared in
                    guard shared.generation == loop.generation else { return false }
                    shared.complete = true
                    queue.markComplete()
                    return true
                }
            }
            await wake.wait(for: .seconds(60), on: clock)
        }
    }

    /// The segments of `level`, loading them when a switch needs them; `nil` (with the switch abandoned) when they
    /// cannot be had.
    private func segments(of level: Int, _ loop: inout Loop) async -> [SegmentReference]? {
        if let known = loop.segmentsByLevel[level] { return known }
        do throws(PlayerError) {
            let list = try await loadSegments(
                level, ladder: loop.opened.ladder, in: loop.opened.presentation, reload: loop.refresh != nil)
            var references = list.references
            if list.isLive, loop.opened.presentation.streamingProtocol == .hls {
                references = loop.opened.placement.place(references)
            }
            if !list.isLive, loop.refresh != nil, loop.opened.presentation.streamingProtocol == .hls {
                loop.refresh = nil  // the playlist ended
            }
            loop.segmentsByLevel[level] = references
            if level == loop.selector.current { publish(references, loop) }
            return references
        } catch {
            if level != loop.selector.current {
                loop.selector.switchFailed()
                report(
                    PlayerError(
                        .renditionSwitchFailed, severity: .warning,
                        "the switch to rendition \(level) was abandoned: \(error.message)", underlying: error))
            } else {
                fail(error)
                await wake.wait(for: .seconds(60), on: clock)
            }
            return nil
        }
    }

    /// Fetches one segment (its initialisation section first when it starts a run) with retries, and queues it.
    private func fetch(
        _ segment: SegmentReference, level: Int, newRun: Bool, in segments: [SegmentReference], _ loop: inout Loop
    ) async {
        var rendition = loop.opened.ladder.rendition(level, for: segment)
        // Audio-only content's requests say so (CMCD `ot=a`) even when the manifest gives no codecs.
        if audioOnly.load(ordering: .relaxed), rendition.codecs == nil, rendition.mimeType == nil {
            rendition.mimeType = "audio/mp4"
        }
        if let next = SegmentScheduler.firstIndex(endingAfter: segment.end, in: segments) {
            reporter.update { $0.next = (segment, segments[next]) }
        }
        let started = clock.now()
        let result = await requests.segmentBytes(segment, of: rendition, newRun: newRun, lane: lane(.video))
        guard shared.withLock({ $0.generation == loop.generation && !$0.stopped }) else { return }
        switch result {
        case .success(let data):
            requests.restored()
            let seconds = (clock.now() - started).seconds
            loop.selector.arrived(from: level)
            loop.estimator.add(bytes: data.count, seconds: max(seconds, 1e-4))
            loop.scheduler.fetched(segment, rendition: "\(level)")
            if let committed = loop.segmentsByLevel[level], level != loop.opened.level {
                loop.opened.level = level
                publish(committed, loop)
            }
            // Queued only if no seek came since the check above: checked again under the lock a seek resets the
            // queue under.
            let queued = shared.withLock { shared in
                guard shared.generation == loop.generation, !shared.stopped else { return false }
                queue.append(data, newRun: newRun, segment: segment)
                return true
            }
            guard queued else { return }
            let bandwidth = loop.opened.ladder.bandwidths[level]
            let estimate = loop.estimator.bitsPerSecond
            let end = segment.end
            changeShared {
                $0.bufferEnd = end
                $0.statistics.bytesLoaded += data.count
                $0.statistics.segmentsLoaded += 1
                $0.statistics.rendition = level
                $0.statistics.bitrate = bandwidth > 0 ? bandwidth : nil
                $0.statistics.bandwidthEstimate = estimate
            }
            reporter.update {
                $0.bufferEnd = end
                $0.starvation = false
                $0.throughput = estimate
            }
        case .failure(let error):
            let switching = loop.selector.pending == level
            switch loop.scheduler.failed(
                segment, switching: switching, unreachable: error.connectivity,
                policy: settings.streaming.missingSegmentPolicy)
            {
            case .abandonSwitch:
                loop.selector.switchFailed()
                report(
                    PlayerError(
                        .renditionSwitchFailed, severity: .warning,
                        "the switch to rendition \(level) was abandoned: its segment \(segment.number) failed (\(error.message))",
                        underlying: error))
            case .fail:
                fail(
                    PlayerError(
                        .sourceUnavailable, severity: .fatal, "segment \(segment.number) failed: \(error.message)",
                        underlying: error.underlying))
                await wake.wait(for: .seconds(60), on: clock)
            case .skip:
                report(
                    PlayerError(
                        .segmentSkipped, severity: .warning,
                        "segment \(segment.number) failed and was skipped: \(error.message)",
                        underlying: error.underlying))
                changeShared { $0.bufferEnd = segment.end }
            }
        }
    }

    /// Loads the next version of a live presentation: the current level's HLS playlist, or the MPD.
    private func reload(_ loop: inout Loop) async {
        guard var schedule = loop.refresh else { return }
        let level = loop.selector.current
        let previousLast = loop.segmentsByLevel[level]?.last?.number
        let outcome = await requests.attempt(keyURL: nil, once: true, lane: lane(.video)) {
            [client, settings, opened = loop.opened] () async throws -> (Presentation, RenditionLadder, SegmentList) in
            var presentation = opened.presentation
            // Listed segments come with the manifest itself (an MPD, or a media playlist opened directly): load it
            // again. A variant's media playlist is reloaded on its own.
            let listed = opened.ladder.levels[level].contains { $0.segments.references != nil }
            if listed || presentation.streamingProtocol == .dash { presentation = try await client.refresh() }
            let ladder = try RenditionLadder(presentation, preferredAudioLanguage: settings.preferredAudioLanguage)
            var merged = try await Self.segments(
                of: ladder.levels[min(level, ladder.levels.count - 1)], in: presentation, client: client, reload: true)
            if presentation.streamingProtocol == .dash { merged.isLive = presentation.isLive }
            return (presentation, ladder, merged)
        }
        switch outcome {
        case .success(let (presentation, ladder, list)):
            requests.restored()
            if ladder.levels.count == loop.opened.ladder.levels.count {
                loop.opened.presentation = presentation
                loop.opened.ladder = ladder
            }
            if let target = list.targetDuration, presentation.streamingProtocol == .hls {
                loop.opened.targetDuration = target
            }
            var references = list.references
            if loop.opened.presentation.streamingProtocol == .hls {
                references = loop.opened.placement.place(references)
            }
            loop.segmentsByLevel = [level: references]
            publish(references, loop)
            if !list.isLive {
                loop.refresh = nil
                return
            }
            let delay = schedule.loaded(changed: references.last?.number != previousLast)
            loop.nextReload = clock.now() + delay
            loop.refresh = schedule
            wake.signal()
        case .failure(let error):
            let delay = schedule.failed()
            loop.refresh = schedule
            loop.nextReload = clock.now() + delay
            report(
                PlayerError(
                    .playlistReloadFailed, severity: .warning,
                    "the live \(loop.opened.presentation.streamingProtocol == .hls ? "playlist" : "MPD") could not be reloaded (\(error.message)); retrying in \(delay)",
                    underlying: error.underlying))
        }
    }

    /// Makes `segments` the current level's: the window, and where a seek begins.
    private func publish(_ segments: [SegmentReference], _ loop: Loop) {
        guard let first = segments.first, let last = segments.last else { return }
        let isLive = loop.refresh != nil
        // HLS: the target duration; DASH: the newest segment's length (what the window grows by).
        let target = loop.opened.targetDuration > 0 ? loop.opened.targetDuration : last.duration
        changeShared {
            $0.window = (first.start...last.end, isLive, target)
            $0.segments = segments
        }
    }

    /// Marks the stream failed for the decoder and the engine.
    func fail(_ error: PlayerError) {
        changeShared { $0.failure = error }
        queue.fail(error)
    }
}
