import FilmstripFormats
import FilmstripStreaming

/// The renditions of a presentation as levels for adaptive bitrate: level `i` is, in every period, that period's
/// `i`th rendition by bandwidth (the last one where a period has fewer). One level is one continuous rendition choice
/// across period boundaries.
///
/// The levels are the main video track's. Variants whose codecs are all audio (the audio-only variant an HLS master
/// offers for poor networks) are left out of a video ladder; a presentation without video plays its audio as the
/// ladder (``isAudioOnly``): an HLS master of audio-only variants, else the audio track chosen by language.
struct RenditionLadder: Sendable {
    /// `levels[level][period]`.
    let levels: [[Presentation.Rendition]]
    /// The levels are audio (the presentation has no video).
    let isAudioOnly: Bool

    /// The ladder of the main video track of every period (the default track, else the first); without video, the
    /// audio chosen by `preferredAudioLanguage` (see ``AudioTrackSelection``).
    init(_ presentation: Presentation, preferredAudioLanguage: String? = nil) throws(PlayerError) {
        var perPeriod: [[Presentation.Rendition]] = []
        for period in presentation.periods {
            guard let renditions = Self.mainVideo(of: period)?.renditions.filter({ !Self.isAudio($0) }),
                !renditions.isEmpty
            else { continue }
            perPeriod.append(renditions.sorted { $0.bandwidth < $1.bandwidth })
        }
        isAudioOnly = perPeriod.isEmpty
        if isAudioOnly {
            for period in presentation.periods {
                if let variants = Self.mainVideo(of: period)?.renditions, !variants.isEmpty {
                    // Only audio-only variants (else the video ladder above would have them).
                    perPeriod.append(variants.sorted { $0.bandwidth < $1.bandwidth })
                    continue
                }
                let tracks = period.tracks.filter { $0.kind == .audio && !$0.renditions.isEmpty }
                guard let choice = AudioTrackSelection.choose(tracks, preferredLanguage: preferredAudioLanguage) else {
                    continue
                }
                perPeriod.append(tracks[choice].renditions.sorted { $0.bandwidth < $1.bandwidth })
            }
        }
        guard !perPeriod.isEmpty else {
            let kinds = Set(presentation.periods.flatMap { $0.tracks.map(\.kind.rawValue) }).sorted()
            throw PlayerError(
                .sourceInvalid, severity: .fatal,
                kinds.contains("iframe") || kinds.contains("image")
                    ? "an I-frame or image playlist cannot be played"
                    : "the presentation has no video or audio track (it has: \(kinds.joined(separator: ", ")))")
        }
        let count = perPeriod.map(\.count).max() ?? 1
        levels = (0..<count).map { level in perPeriod.map { $0[min(level, $0.count - 1)] } }
    }

    /// A period's main video track: the default one, else the first.
    private static func mainVideo(of period: Presentation.Period) -> Presentation.Track? {
        let tracks = period.tracks.filter { $0.kind == .video && !$0.renditions.isEmpty }
        return tracks.first(where: \.isDefault) ?? tracks.first
    }

    /// Whether the rendition's codecs (or, without them, its MIME type) say it carries audio alone.
    static func isAudio(_ rendition: Presentation.Rendition) -> Bool {
        (rendition.codecs != nil || rendition.mimeType != nil)
            && CmcdReporter.mediaType(codecs: rendition.codecs, mimeType: rendition.mimeType) == .audio
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
