import FilmstripFormats

/// The video renditions of a presentation as levels for adaptive bitrate: level `i` is, in every period, that
/// period's `i`th rendition by bandwidth (the last one where a period has fewer). One level is one continuous
/// rendition choice across period boundaries.
struct RenditionLadder: Sendable {
    /// `levels[level][period]`.
    let levels: [[Presentation.Rendition]]

    /// The ladder of the main video track of every period (the default track, else the first).
    init(_ presentation: Presentation) throws(PlayerError) {
        var perPeriod: [[Presentation.Rendition]] = []
        for period in presentation.periods {
            let tracks = period.tracks.filter { $0.kind == .video }
            guard let track = tracks.first(where: \.isDefault) ?? tracks.first, !track.renditions.isEmpty else {
                continue
            }
            perPeriod.append(track.renditions.sorted { $0.bandwidth < $1.bandwidth })
        }
        guard !perPeriod.isEmpty else {
            let kinds = Set(presentation.periods.flatMap { $0.tracks.map(\.kind.rawValue) }).sorted()
            throw PlayerError(
                .sourceInvalid, severity: .fatal,
                kinds.contains("iframe") || kinds.contains("image")
                    ? "an I-frame or image playlist cannot be played"
                    : "the presentation has no video track (it has: \(kinds.joined(separator: ", ")))")
        }
        let count = perPeriod.map(\.count).max() ?? 1
        levels = (0..<count).map { level in perPeriod.map { $0[min(level, $0.count - 1)] } }
    }

    /// The bandwidth of each level (its largest across periods), bits per second.
    var bandwidths: [Int] { levels.map { $0.map(\.bandwidth).max() ?? 0 } }

    /// The rendition of `level` that `segment` belongs to (by its period; DASH numbers periods in the discontinuity
    /// sequence).
    func rendition(_ level: Int, for segment: SegmentReference) -> Presentation.Rendition {
        let periods = levels[level]
        return periods[min(max(0, segment.discontinuitySequence), periods.count - 1)]
    }
}
