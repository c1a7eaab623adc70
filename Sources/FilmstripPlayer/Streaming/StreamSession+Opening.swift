import FilmstripFormats
import FilmstripLoading
import FilmstripStreaming
import FilmstripSync
import Foundation

/// Opening a presentation: the manifest, the ladder, the first level's segments and the separate audio.
extension StreamSession {
    /// Loads the manifest (and the first level's segments). Blocks the calling thread (the engine's); ``stop()``
    /// from another thread cancels it (then ``isStopped`` is true).
    func open() throws(PlayerError) -> StreamOpening {
        let result = waitForTask(activity: clock.activity) { [self] () async -> Result<StreamOpening, PlayerError> in
            do throws(PlayerError) {
                return .success(try await openAsync())
            } catch {
                return .failure(error)
            }
        } started: { task in
            shared.withLock { shared in
                shared.opening = task
                return shared.stopped
            }
        }
        shared.withLock { $0.opening = nil }
        return try result.get()
    }

    func openAsync() async throws(PlayerError) -> StreamOpening {
        let presentation = try await requests.withRetries(lane: lane(.video)) { [client] in
            try await client.presentation()
        }
        if let keys = settings.contentKeys, let make = settings.manifestLicense,
            let named = presentation.protection.first(where: { $0.isClearKey && $0.licenseURL != nil })?
                .licenseURL(relativeTo: presentation.url)
        {
            keys.adopt(make(named))
        }
        let ladder = try RenditionLadder(presentation, preferredAudioLanguage: settings.preferredAudioLanguage)
        audioOnly.store(ladder.isAudioOnly, ordering: .relaxed)
        let configured =
            ladder.levels.indices.contains(settings.streaming.startRendition)
            ? settings.streaming.startRendition : 0
        // An optimized live start fetches its first segment from the lowest level: the smallest first fetch.
        var level = settings.optimizeLiveStartup ? 0 : configured
        var placement = LiveSegmentPlacement()
        var list = try await loadSegments(level, ladder: ladder, in: presentation, reload: false)
        if level != configured, !(presentation.isLive || list.isLive) {
            level = configured
            list = try await loadSegments(level, ladder: ladder, in: presentation, reload: false)
        }
        let isLive = presentation.isLive || list.isLive
        // Packed audio segments (RFC 8216 section 3.4) name audio-only content before any is decoded.
        if !list.references.isEmpty,
            list.references.allSatisfy({ Self.packedAudioExtensions.contains($0.url.pathExtension.lowercased()) })
        {
            audioOnly.store(true, ordering: .relaxed)
        }
        let segments =
            isLive && presentation.streamingProtocol == .hls ? placement.place(list.references) : list.references
        guard let first = segments.first, let last = segments.last else {
            throw PlayerError(.sourceInvalid, severity: .fatal, "\(url.absoluteString) lists no segments")
        }
        let target = list.targetDuration ?? 0
        reporter.update {
            $0.streamingFormat = presentation.streamingProtocol == .hls ? .hls : .dash
            $0.isLive = isLive
            $0.topBitrate = ladder.bandwidths.max()
        }
        // Audio-only content plays its audio as the ladder: no separate lane.
        let audio = ladder.isAudioOnly ? nil : AudioPlan(presentation)
        if let audio {
            let choice = AudioTrackSelection.choose(audio.tracks, preferredLanguage: settings.preferredAudioLanguage)
            audioState.withLock { $0.selection = choice ?? 0 }
        }
        opened.withLock {
            $0 = Opened(
                presentation: presentation, ladder: ladder, level: level, segments: segments, placement: placement,
                isLive: isLive, targetDuration: target, audio: audio)
        }
        shared.withLock {
            $0.window = (first.start...last.end, isLive, target)
            $0.segments = segments
            $0.statistics.rendition = level
            $0.statistics.bitrate = ladder.bandwidths[level] > 0 ? ladder.bandwidths[level] : nil
        }
        return StreamOpening(
            isLive: isLive, duration: isLive ? 0 : (presentation.duration ?? last.end - first.start),
            window: first.start...last.end, targetDuration: target,
            suggestedDelay: presentation.suggestedPresentationDelay, bandwidths: ladder.bandwidths, level: level,
            segments: segments)
    }

    /// The file extensions of HLS packed audio segments: AAC (ADTS), MP3, AC-3 and E-AC-3.
    static let packedAudioExtensions: Set<String> = ["aac", "mp3", "ac3", "ec3"]

    /// The segments of one level across every period, with retries.
    func loadSegments(
        _ level: Int, ladder: RenditionLadder, in presentation: Presentation, reload: Bool
    ) async throws(PlayerError) -> SegmentList {
        try await requests.withRetries(lane: lane(.video)) { [client] in
            try await Self.segments(of: ladder.levels[level], in: presentation, client: client, reload: reload)
        }
    }

    /// The segments of one level's renditions (one per period), merged in presentation order.
    static func segments(
        of renditions: [Presentation.Rendition], in presentation: Presentation, client: StreamingClient, reload: Bool
    ) async throws -> SegmentList {
        var merged = SegmentList(references: [], isLive: false, targetDuration: nil)
        for rendition in renditions {
            let list = try await client.segmentList(of: rendition, in: presentation, reload: reload)
            merged.references += list.references
            merged.isLive = merged.isLive || list.isLive
            merged.targetDuration = list.targetDuration ?? merged.targetDuration
        }
        merged.references.sort { $0.start < $1.start }
        return merged
    }
}
