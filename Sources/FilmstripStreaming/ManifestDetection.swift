import FilmstripFormats
import FilmstripLoading
public import Foundation

/// Whether a URL names a streaming manifest.
public enum ManifestDetection {
    /// True for an HLS playlist or a DASH MPD: by extension (`.m3u8`, `.m3u`, `.mpd`), or, for a local file, by its
    /// first bytes (`#EXTM3U`, or XML whose root is `MPD`).
    public static func isManifest(_ url: URL) -> Bool {
        let ext = url.pathExtension.lowercased()
        if ext == "m3u8" || ext == "m3u" || ext == "mpd" { return true }
        guard LocalFile.regularFileSize(url) != nil, let handle = FileHandle(forReadingAtPath: url.path) else {
            return false
        }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 1024)) ?? Data()
        switch ContentKind.detect(head) {
        case .hlsPlaylist?: return true
        case .mpd?: return String(decoding: head, as: UTF8.self).contains("<MPD")
        default: return false
        }
    }
}
