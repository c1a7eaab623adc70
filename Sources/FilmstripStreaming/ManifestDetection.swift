import FilmstripFormats
import FilmstripLoading
public import Foundation

/// Whether a URL names a streaming manifest, and which: the one content sniffer every engine, the player, the
/// server and the CLI ask.
public enum ManifestDetection {
    /// The two kinds of manifest.
    public enum Kind: Sendable, Hashable {
        /// An HLS playlist (master or media).
        case hls
        /// A DASH MPD.
        case dash
    }

    /// True for an HLS playlist or a DASH MPD (see ``kind(of:)``).
    public static func isManifest(_ url: URL) -> Bool { kind(of: url) != nil }

    /// The manifest `url` names: by extension (`.m3u8`, `.m3u`, `.mpd`), or, for a local file, by its first bytes
    /// (`#EXTM3U`, or XML whose root is `MPD`); `nil` for anything else.
    public static func kind(of url: URL) -> Kind? {
        if let named = kind(ofExtension: url.pathExtension) { return named }
        guard LocalFile.regularFileSize(url) != nil, let handle = FileHandle(forReadingAtPath: url.path) else {
            return nil
        }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 1024)) ?? Data()
        switch ContentKind.detect(head) {
        case .hlsPlaylist?: return .hls
        case .mpd?: return String(decoding: head, as: UTF8.self).contains("<MPD") ? .dash : nil
        default: return nil
        }
    }

    /// The manifest a file name's extension says (`m3u8`, `m3u`, `mpd`), without reading anything: for names a
    /// listing already sorted by extension.
    public static func kind(ofExtension ext: String) -> Kind? {
        switch ext.lowercased() {
        case "m3u8", "m3u": .hls
        case "mpd": .dash
        default: nil
        }
    }
}
