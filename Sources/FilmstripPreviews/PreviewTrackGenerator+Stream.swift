import FilmstripFormats
import FilmstripMedia
import FilmstripStreaming
import FilmstripSync
import Foundation

extension PreviewTrackGenerator {
    /// Generation from an HLS or DASH presentation: the rendition is the smallest at least as wide as a tile (else
    /// the largest); each segment that holds a cue start is fetched once (with its initialisation data once per
    /// rendition) and demuxed from memory, and its cues are decoded by one worker while others fetch and decode
    /// other segments.
    static func generateFromStream(
        _ input: URL, to directory: URL, options: PreviewTrackConfiguration, started: Date,
        progress: (@Sendable (Int, Int) -> Void)?
    ) async throws -> PreviewTrackSummary {
        var options = options
        var extractorOptions = FrameExtractorConfiguration()
        extractorOptions.maximumSize = PixelSize(width: options.width, height: Int(Int32.max))
        extractorOptions.loading = options.loading
        extractorOptions.transport = options.transport
        extractorOptions.contentKeys = options.contentKeys
        extractorOptions.license = options.license
        let stream = StreamFrames(url: input, options: extractorOptions)
        let timeline = try await stream.timeline()
        guard !timeline.presentation.isLive else {
            throw MediaError(.invalidMedia, "a live stream has no duration to generate a track for", url: input)
        }
        let streamingProtocol = timeline.presentation.streamingProtocol
        if options.attach {
            try ManifestAttachment.checkAttachment(
                input: input, directory: directory, streamingProtocol: streamingProtocol, options: options)
            options.formats.insert(streamingProtocol == .hls ? .hls : .dash)
            // An HLS stream also gets the I-frame image sequence: the previews of players that read no image
            // playlist (hls.js) and of low-bandwidth devices.
            if streamingProtocol == .hls { options.formats.insert(.iframeImages) }
        }
        let cancellation = CancellationFlag()
        let store = SegmentStore(
            stream: stream, timeline: timeline, cancellation: cancellation, capacity: 2 * options.workers + 2)
        return try await withTaskCancellationHandler { [options] in
            // The first segment tells the display size.
            let first = try await store.segment(0)
            let outputs = try GenerationOutputs(
                duration: timeline.presentation.duration ?? timeline.end, displaySize: first.input.displaySize,
                url: input, directory: directory, options: options)
            let plan = outputs.primary
            // Cues grouped by the segment that holds their start.
            var grouped: [Int: [Int]] = [:]
            for k in 0..<plan.count {
                let s =
                    timeline.segmentIndex(containing: min(plan.start(of: k), timeline.end - MediaTime.tolerance)) ?? 0
                grouped[s, default: []].append(k)
            }
            let bySegment = grouped
            let work = bySegment.keys.sorted()
            let counters = StreamWorkCounters()
            let workers = max(1, min(options.workers, work.count))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<workers {
                    group.addTask {
                        let converters = Handoff(outputs.makeConverters())
                        let bifConverter = Handoff(outputs.needsBIFConverter ? FrameConverter() : nil)
                        while true {
                            let w = counters.next.add(1, ordering: .relaxed).oldValue
                            guard w < work.count else { return }
                            let s = work[w]
                            for k in bySegment[s] ?? [] {
                                let (owner, key) = try await chooseStreamFrame(
                                    k, segment: s, plan: plan, store: store, mode: options.mode)
                                let job = Handoff((owner, key, converters.value, bifConverter.value))
                                try await runBlocking {
                                    let (owner, key, converters, bifConverter) = job.value
                                    var frame: OwnedFrame
                                    if var key {
                                        let result = try owner.decode(key)
                                        counters.decoded.add(result.decoded, ordering: .relaxed)
                                        frame = result.frame
                                        // --skip-blank: a later keyframe of the same segment inside the cue.
                                        var tries = 0
                                        while options.skipBlank, tries < 4,
                                            try PreviewTrackGenerator.isBlank(frame, analyzer: converters[0]),
                                            let later = owner.keyPacket(
                                                inside: CuePicture(
                                                    start: owner.time(of: key) + 0.001, end: plan.end(of: k)))
                                        {
                                            tries += 1
                                            key = later
                                            let next = try owner.decode(later)
                                            counters.decoded.add(next.decoded, ordering: .relaxed)
                                            frame = next.frame
                                        }
                                    } else {
                                        let result = try owner.exactFrame(at: plan.start(of: k))
                                        counters.decoded.add(result.decoded, ordering: .relaxed)
                                        guard let exact = result.frame else {
                                            throw MediaError(
                                                .decodeFailed, "no frame decoded near \(plan.start(of: k)) s",
                                                url: owner.reference.url)
                                        }
                                        frame = exact
                                    }
                                    try outputs.fill(
                                        k, with: frame, converters: converters, quarterTurns: owner.input.quarterTurns,
                                        bifConverter: bifConverter)
                                }
                                progress?(counters.done.add(1, ordering: .relaxed).newValue, plan.count)
                            }
                        }
                    }
                }
                do {
                    try await group.waitForAll()
                } catch {
                    cancellation.cancelAll()
                    throw error
                }
            }
            var summary = try outputs.finish(
                started: started, bytesRead: stream.client.statistics.bytes,
                decodedFrames: counters.decoded.load(ordering: .relaxed))
            if options.attach {
                summary.attachedManifest = try await ManifestAttachment.attach(
                    summary, stream: stream, timeline: timeline, displaySize: first.input.displaySize,
                    directory: directory, sheetTemplate: options.sheetName(nil))
                summary.files.append(summary.attachedManifest!)
                summary.seconds = Date().timeIntervalSince(started)
            }
            return summary
        } onCancel: {
            cancellation.cancelAll()
        }
    }

    /// The segment and key packet for thumbnail `k` (`nil` packet: decode the exact frame at the cue start). Keyframe
    /// mode takes the first keyframe inside the cue (in its segment or at the start of the next one), else the one
    /// before the cue; auto mode, else the exact frame.
    private static func chooseStreamFrame(
        _ k: Int, segment s: Int, plan: Plan, store: SegmentStore, mode: PreviewTrackConfiguration.Mode
    ) async throws -> (StreamSegment, OwnedPacket?) {
        let cue = CuePicture(start: plan.start(of: k), end: plan.end(of: k))
        let here = try await store.segment(s)
        for look in CuePicture.looks(mode) {
            switch look {
            case .keyframeInside:
                if let key = here.keyPacket(inside: cue) { return (here, key) }
                let segments = store.timeline.segments
                if s + 1 < segments.count, segments[s + 1].start < cue.end - MediaTime.tolerance {
                    let next = try await store.segment(s + 1)
                    if let key = next.firstKeyPacket, cue.contains(next.time(of: key)) { return (next, key) }
                }
            case .keyframeBefore:
                if let key = here.keyPacket(atOrBefore: cue.start) { return (here, key) }
                var earlier = s - 1
                while earlier >= 0 {
                    let segment = try await store.segment(earlier)
                    if let key = segment.packets.last(where: \.isKey) { return (segment, key) }
                    earlier -= 1
                }
                // Nothing before the cue: the stream's first keyframe, in this segment.
                guard let key = here.firstKeyPacket else {
                    throw MediaError(.decodeFailed, "no keyframe near \(cue.start) s", url: here.reference.url)
                }
                return (here, key)
            case .exactFrame: return (here, nil)
            }
        }
        return (here, nil)
    }
}

/// The next unit of work, thumbnails done and frames decoded, shared by the workers.
private final class StreamWorkCounters: Sendable {
    let next = Atomic<Int>(0)
    let done = Atomic<Int>(0)
    let decoded = Atomic<Int>(0)
}

/// Opened segments shared by the generation's workers: each is fetched and demuxed once (concurrent requests for the
/// same one wait for the first), and the most recently used few are kept for neighbours.
final class SegmentStore: Sendable {
    let timeline: MediaTimeline
    private let stream: StreamFrames
    private let cancellation: CancellationFlag
    private let capacity: Int
    private let state = Mutex<(tasks: [Int: Task<StreamSegment, any Error>], order: [Int])>(([:], []))

    init(stream: StreamFrames, timeline: MediaTimeline, cancellation: CancellationFlag, capacity: Int) {
        self.stream = stream
        self.timeline = timeline
        self.cancellation = cancellation
        self.capacity = max(2, capacity)
    }

    /// Segment `index`, opened. Two workers may share a neighbour's segment: its packets are read-only after
    /// opening, and its decoder is used under its own lock (see ``StreamSegment``).
    func segment(_ index: Int) async throws -> StreamSegment {
        let task = state.withLock { state -> Task<StreamSegment, any Error> in
            if let task = state.tasks[index] {
                state.order.removeAll { $0 == index }
                state.order.append(index)
                return task
            }
            let task = Task { [stream, timeline, cancellation] in
                try await stream.open(index, of: timeline, cancellation: cancellation)
            }
            state.tasks[index] = task
            state.order.append(index)
            while state.order.count > capacity {
                let evicted = state.order.removeFirst()
                state.tasks[evicted] = nil
            }
            return task
        }
        return try await task.value
    }
}
