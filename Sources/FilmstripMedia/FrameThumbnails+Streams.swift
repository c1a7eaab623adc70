import FilmstripFormats
import FilmstripImaging
import FilmstripStreaming
import FilmstripSync
import Foundation

/// Keyframes of HLS and DASH presentations: an I-frame playlist's entries, or the segments' own keyframes.
extension FrameThumbnails {
    /// Records the keyframes of an opened segment.
    private func learn(_ segment: StreamSegment, span: ClosedRange<Double>) {
        let times = segment.packets.filter(\.isKey).map { segment.time(of: $0) }
        state.withLock { s in
            s.streamKeyframes = Array(Set(s.streamKeyframes + times)).sorted()
            s.knownSpans.append(span)
        }
    }

    func streamKeyframe(
        _ t: Double, stream: StreamFrames, source: KeyframeSource, superseded: @escaping @Sendable () throws -> Void
    ) async throws -> Keyframe? {
        let timeline = try await stream.timeline()
        guard !timeline.segments.isEmpty, t >= timeline.start - MediaTime.tolerance,
            t < timeline.end + MediaTime.tolerance,
            let index = timeline.segmentIndex(containing: min(t, timeline.end - MediaTime.tolerance))
        else { return nil }
        if source == .iFramePlaylist {
            // One I-frame per entry: it shows from its start to the next entry's.
            let entry = timeline.segments[index]
            let key = Int64((entry.start * 1000).rounded())
            if let cached = cache.value(for: key) { return cached }
            try superseded()
            let opened = try await stream.open(index, of: timeline, cancellation: CancellationFlag())
            try superseded()
            guard let packet = opened.firstKeyPacket else {
                throw MediaError(.decodeFailed, "the I-frame range holds no keyframe", url: entry.url)
            }
            let end = index + 1 < timeline.segments.count ? timeline.segments[index + 1].start : nil
            return try await decode(opened, packet, time: entry.start, end: end ?? timeline.end, isLast: end == nil)
        }
        if configuration.segmentKeyframe == .first {
            return try await firstKeyframe(of: index, in: timeline, stream: stream, superseded: superseded)
        }
        // Segments: the keyframe at or before t.
        let found = try await KeyframeLocator.keyframe(atOrBefore: t, inSegment: index) { k in
            try superseded()
            // The segment that holds t is read up to t (its head); an earlier one, whose last keyframe answers, whole.
            let opened =
                k == index
                ? try await stream.open(k, of: timeline, through: t, cancellation: CancellationFlag())
                : try await stream.open(k, of: timeline, cancellation: CancellationFlag())
            let segment = timeline.segments[k]
            // A segment starts with a keyframe, so its keyframes answer for the span read.
            if opened.firstKeyPacket.map({ opened.time(of: $0) <= segment.start + 0.05 }) ?? false {
                learn(opened, span: segment.start...max(segment.start, opened.readEnd))
            }
            return opened
        }
        guard let (owner, opened, packet) = found else { return nil }
        let time = opened.time(of: packet)
        let key = Int64((time * 1000).rounded())
        let nextKey = opened.packets.filter(\.isKey).map { opened.time(of: $0) }.first {
            $0 > time + MediaTime.tolerance
        }
        // In a segment read only in part, the keyframe shows at least as far as what was read.
        let following = owner + 1 < timeline.segments.count ? timeline.segments[owner + 1].start : nil
        let end = nextKey ?? (opened.isComplete ? following : opened.readEnd)
        if var cached = cache.value(for: key) {
            // A later read of the same segment may show the keyframe longer.
            if let known = cached.end, let end, end > known + MediaTime.tolerance {
                cached.end = end
                cached.thumbnail.timeStampEnd = end
                cache.insert(cached, for: key, cost: cached.image.byteCount)
            }
            return cached
        }
        try superseded()
        return try await decode(opened, packet, time: time, end: end ?? timeline.end, isLast: end == nil)
    }

    /// ``SegmentKeyframe/first``: segment `index`'s first keyframe, from its head (the whole segment when the head
    /// holds none), shown for the whole segment.
    private func firstKeyframe(
        of index: Int, in timeline: MediaTimeline, stream: StreamFrames,
        superseded: @escaping @Sendable () throws -> Void
    ) async throws -> Keyframe? {
        let segment = timeline.segments[index]
        try superseded()
        var opened = try await stream.open(index, of: timeline, through: nil, cancellation: CancellationFlag())
        if opened.firstKeyPacket == nil, !opened.isComplete {
            opened = try await stream.open(index, of: timeline, cancellation: CancellationFlag())
        }
        guard let packet = opened.firstKeyPacket else { return nil }
        let time = opened.time(of: packet)
        state.withLock { s in
            s.streamKeyframes = Array(Set(s.streamKeyframes + [time])).sorted()
            s.knownSpans.append(segment.start...segment.end)
        }
        if let cached = cache.value(for: Int64((time * 1000).rounded())) { return cached }
        let following = index + 1 < timeline.segments.count ? timeline.segments[index + 1].start : nil
        try superseded()
        return try await decode(opened, packet, time: time, end: following ?? timeline.end, isLast: following == nil)
    }

    private func decode(
        _ segment: StreamSegment, _ packet: OwnedPacket, time: Double, end: Double, isLast: Bool
    )
        async throws -> Keyframe
    {
        let work = Handoff((segment, packet))
        let maximum = configuration.maximumSize
        let image = try await runBlocking { () throws -> PixelBuffer in
            let (segment, packet) = work.value
            let (frame, _) = try segment.decode(packet)
            return try segment.input.geometry.image(frame, fittingIn: maximum)
        }
        decoded.add(1, ordering: .relaxed)
        let keyframe = try makeKeyframe(image, time: time, end: end, isLast: isLast, url: segment.reference.url)
        cache.insert(keyframe, for: Int64((time * 1000).rounded()), cost: image.byteCount)
        return keyframe
    }
}
