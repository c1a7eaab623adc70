import FilmstripMedia
public import FilmstripPreviews
import Foundation

/// The completion marker of an item: `filmstrip-item.json` in its folder, written last, after every output is on
/// disk. The folder is renamed into place with the marker in it, so an item with a marker is complete and an item
/// without a folder is absent; there is nothing in between.
///
/// It also says what the folder holds, for `catalog index` and for checking the files later
/// (`catalog status --verify`).
public struct ItemCompletion: Sendable, Hashable, Codable {
    /// An output file.
    public struct File: Sendable, Hashable, Codable {
        /// Path relative to the item's folder.
        public var path: String
        /// Size in bytes.
        public var bytes: Int64
        /// SHA-256 of the content, hex.
        public var sha256: String
    }

    /// A track file in one format at one width.
    public struct Track: Sendable, Hashable, Codable {
        /// `vtt`, `hls`, `dash`, `bif`, `json` or `storyboard`.
        public var format: String
        /// Thumbnail width.
        public var width: Int
        /// Path relative to the item's folder.
        public var path: String
    }

    /// The item's key.
    public var key: ContentKey
    /// The input as listed when it was made.
    public var input: String
    /// The version of the input it was made from.
    public var identity: ItemIdentity
    /// The settings it was made with.
    public var settings: PreviewOutputSettings
    /// Every output file, sorted by path.
    public var files: [File]
    /// The track files.
    public var tracks: [Track]
    /// Number of thumbnails (at the main width).
    public var thumbnails: Int
    /// Number of sheets (at the main width).
    public var sheets: Int
    /// The video's duration in seconds.
    public var duration: Double
    /// Thumbnail width in pixels.
    public var tileWidth: Int
    /// Thumbnail height in pixels.
    public var tileHeight: Int
    /// A random id of the generation that made it (each generation has its own).
    public var generation: String
    /// When it was completed (ISO 8601, UTC).
    public var completed: String
    /// The host that made it.
    public var host: String
}

extension ItemCompletion.Track {
    /// The format of a track file the generator writes, by its name.
    static func format(ofFileNamed name: String) -> String? {
        switch name {
        case "thumbnails.vtt": "vtt"
        case "thumbnails.m3u8": "hls"
        case "thumbnails.mpd": "dash"
        case "thumbnails.bif": "bif"
        case "thumbnails.json": "json"
        case "storyboard.json": "storyboard"
        case "iframe-images.m3u8": "iframe-images"
        default: nil
        }
    }
}
