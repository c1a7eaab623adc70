import FilmstripStreaming
public import Foundation

/// The videos in a folder tree, as a person would count them.
///
/// A video is a regular file with a video extension (``videoExtensions``). Hidden files and folders are skipped,
/// and so is every file an HLS playlist in the tree lists, wherever it lies: the `.ts` pieces of a stream the
/// `ffmpeg` CLI wrote are not videos of their own. A file addressed by byte ranges (ffmpeg's single-file mode) holds
/// the whole stream and stays a video. With `includingStreams`, the streams themselves are counted instead: every
/// DASH MPD, and every HLS playlist no other playlist lists (a master, or a media playlist on its own), and a file
/// addressed by byte ranges is then its playlist's media, not a second video. A manifest is read as the player reads
/// one (`ParsedManifest`: its parsers and `StreamingLimits`): an image or I-frame playlist on its own, or an MPD of
/// images alone, is a preview track, not a stream; a playlist or MPD that does not parse names nothing and is still
/// counted (opening it says what is wrong).
public enum VideoFolder {
    /// File extensions taken as videos.
    public static let videoExtensions: Set<String> = [
        "mp4", "m4v", "mov", "mkv", "webm", "ts", "m2ts", "mts", "avi", "mpg", "mpeg", "ogv", "flv", "3gp",
    ]

    /// File extensions of sound alone, taken with `includingAudio` (a library shows them with their cover picture).
    public static let audioExtensions: Set<String> = ["m4a", "mp3", "flac", "opus", "oga", "wav"]

    /// Every video under `directory` (standardized file URLs), sorted by path; with `includingAudio`, files of sound
    /// alone too (those a playlist lists are its segments, not files of their own).
    public static func videos(
        under directory: URL, includingStreams: Bool = false, includingAudio: Bool = false
    )
        -> [URL]
    {
        guard
            let walker = FileManager.default.enumerator(
                at: directory, includingPropertiesForKeys: [.isRegularFileKey],
                options: [.skipsHiddenFiles, .skipsPackageDescendants])
        else { return [] }
        var files: [URL] = []
        var playlists: [URL] = []
        var manifests: [URL] = []
        for case let url as URL in walker {
            let kind = url.pathExtension.lowercased()
            if videoExtensions.contains(kind) || (includingAudio && audioExtensions.contains(kind)) {
                files.append(url.standardizedFileURL)
            } else if let manifest = ManifestDetection.kind(ofExtension: kind) {
                if manifest == .hls { playlists.append(url.standardizedFileURL) }
                if manifest == .dash, includingStreams { manifests.append(url.standardizedFileURL) }
            }
        }
        // Each manifest read once, as the streaming layer reads it (its limits, its parsers). What a manifest names
        // belongs to it; a file addressed by byte ranges (which holds a whole stream) only when streams are counted.
        // One that does not parse names nothing, and is still counted as a stream: whoever opens it says why it
        // cannot be played, rather than the listing hiding it.
        let read = { (url: URL) in (url, try? ParsedManifest(contentsOf: url)) }
        let hls = playlists.map(read)
        let dash = manifests.map(read)
        var listed: Set<String> = []
        for (_, manifest) in hls + dash {
            listed.formUnion(manifest?.referencedFiles(includingRanged: includingStreams) ?? [])
        }
        var found = files.filter { !listed.contains($0.path) }
        if includingStreams {
            let watched = { (entry: (URL, ParsedManifest?)) in entry.1?.playsMedia ?? true }
            found += hls.filter { watched($0) && !listed.contains($0.0.path) }.map(\.0)
            found += dash.filter(watched).map(\.0)
        }
        return found.sorted { $0.path.localizedStandardCompare($1.path) == .orderedAscending }
    }
}
