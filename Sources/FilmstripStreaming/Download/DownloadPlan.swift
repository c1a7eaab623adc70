import FilmstripFormats
import Foundation

/// One file of a download: where it comes from (a URL and byte range) and where it goes (a path inside the
/// download's directory).
struct DownloadFile: Sendable, Hashable {
    /// The path inside the download's directory.
    var path: String
    var url: URL
    var range: Range<Int64>?
    var object: StreamingRequest.Object
    /// The expected size: exact for a byte range, else estimated from the rendition's bandwidth.
    var estimate: Int64
    /// Whether only the owner may read it (keys).
    var isSecret = false
}

/// What a download holds: its files in fetch order (unique paths), the media playlists and master that name them
/// (written last, once every file is verified), and the preview track.
struct DownloadPlan: Sendable {
    var files: [DownloadFile] = []
    /// Playlist path → its text.
    var playlists: [(path: String, text: String)] = []
    var previews: PreviewPlan?
    /// Key ids the manifest declares (DASH `cenc:default_KID`).
    var keyIDs: [Data] = []
    /// The ClearKey licence server the manifest names (DASH `Laurl`).
    var licenseURL: URL?
    var duration: Double = 0

    static let master = "master.m3u8"

    /// The sum of `files`' sizes as estimated, saturating at `Int64.max`.
    static func estimate(_ files: [DownloadFile]) -> Int64 { files.reduce(0) { $0.saturating($1.estimate) } }
}

/// The stream's image track, to be stored as a WebVTT thumbnail track over the downloaded images.
struct PreviewPlan: Sendable {
    var track: ThumbnailTrack
    /// The stored path of each of the track's images.
    var imagePaths: [String]

    static let path = "previews/thumbnails.vtt"
}

/// The renditions a download takes from a presentation's period, per ``DownloadConfiguration``.
enum DownloadChoice {
    /// The video rendition: the highest bandwidth within the height and bandwidth limits, else the smallest.
    static func video(
        _ renditions: [Presentation.Rendition], configuration: DownloadConfiguration
    ) -> Presentation.Rendition? {
        let fitting = renditions.filter { r in
            if let limit = configuration.maximumHeight, let height = r.height, height > limit { return false }
            if let limit = configuration.maximumBandwidth, r.bandwidth > limit { return false }
            return true
        }
        let order: (Presentation.Rendition, Presentation.Rendition) -> Bool = {
            ($0.bandwidth, $0.pixelCount) < ($1.bandwidth, $1.pixelCount)
        }
        return fitting.max(by: order) ?? renditions.min(by: order)
    }

    /// The audio tracks: by language when asked (``AudioTrackSelection/match(_:_:)``: `en` takes `en-GB` and
    /// `eng`), else the default one (else the first).
    static func audio(_ tracks: [Presentation.Track], languages: [String]?) -> [Presentation.Track] {
        guard let languages else {
            return (tracks.first { $0.isDefault } ?? tracks.first).map { [$0] } ?? []
        }
        return tracks.filter { track in
            guard let language = track.language else { return false }
            return languages.contains { AudioTrackSelection.match(language, $0) != .none }
        }
    }

    /// The rendition of an audio or I-frame track: the highest bandwidth.
    static func best(_ renditions: [Presentation.Rendition]) -> Presentation.Rendition? {
        renditions.max { $0.bandwidth < $1.bandwidth }
    }
}

extension Int64 {
    /// `self + other`, `Int64.max` (or `.min`) instead of an overflow: sizes from a manifest are hostile.
    func saturating(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
