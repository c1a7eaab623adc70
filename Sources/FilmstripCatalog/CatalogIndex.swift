public import Foundation

/// The catalog's published index: for every listed input, where its tracks are.
///
/// ```json
/// {
///   "version": 1,
///   "items": {
///     "show/ep1.mp4": {
///       "key": "3f2a…", "duration": 1325.2, "thumbnails": 133, "tile": {"w": 160, "h": 90},
///       "tracks": {"vtt": "items/3f/3f2a…/thumbnails.vtt", "hls": "items/3f/3f2a…/thumbnails.m3u8"},
///       "widths": {"320": {"vtt": "items/3f/3f2a…/w320/thumbnails.vtt"}}
///     }
///   },
///   "missing": ["show/ep2.mp4"], "failed": ["broken.mp4"], "unreachable": []
/// }
/// ```
///
/// Paths are relative to the catalog folder, or absolute URLs under a base URL (a CDN that serves the folder).
public struct CatalogIndex: Sendable, Hashable, Encodable {
    /// One complete input.
    public struct Entry: Sendable, Hashable, Encodable {
        /// Thumbnail size.
        public struct Tile: Sendable, Hashable, Encodable {
            /// Width in pixels.
            public var w: Int
            /// Height in pixels.
            public var h: Int
        }

        /// The item's key.
        public var key: String
        /// The video's duration in seconds.
        public var duration: Double
        /// Thumbnails per track.
        public var thumbnails: Int
        /// Thumbnail size at the main width.
        public var tile: Tile
        /// Track URL per format at the main width.
        public var tracks: [String: String]
        /// Track URLs per format for each extra width.
        public var widths: [String: [String: String]]?
        /// `false` when the input could not be reached to check it: the entry is the last version made.
        public var verified: Bool?
    }

    /// The index format's version.
    public var version = 1
    /// When it was written (ISO 8601, UTC).
    public var generated: String
    /// Every complete input.
    public var items: [String: Entry]
    /// Inputs without complete outputs.
    public var missing: [String]
    /// Inputs whose last outcome was a failure.
    public var failed: [String]
    /// Remote inputs that could not be reached now; those made before keep their last entry in ``items``.
    public var unreachable: [String]

    /// The index of `status`; `baseURL` (ending in `/`) is put before every path.
    public init(_ status: CatalogStatus, catalog: Catalog, baseURL: String? = nil) {
        generated = CatalogRecord.timestamp()
        var items: [String: Entry] = [:]
        var missing: [String] = []
        var failed: [String] = []
        var unreachable: [String] = []
        for item in status.items {
            if item.state == .unreachable { unreachable.append(item.item.input) }
            guard item.state == .done || item.state == .unreachable, let key = item.key,
                let completion = item.completion
            else {
                if item.state == .failed {
                    failed.append(item.item.input)
                } else if item.state != .unreachable {
                    missing.append(item.item.input)
                }
                continue
            }
            let folder = (baseURL ?? "") + catalog.relativePath(of: key) + "/"
            var tracks: [String: String] = [:]
            var widths: [String: [String: String]] = [:]
            for track in completion.tracks {
                if track.width == completion.settings.width {
                    tracks[track.format] = folder + track.path
                } else {
                    widths["\(track.width)", default: [:]][track.format] = folder + track.path
                }
            }
            items[item.item.input] = Entry(
                key: key.hex, duration: completion.duration, thumbnails: completion.thumbnails,
                tile: .init(w: completion.tileWidth, h: completion.tileHeight), tracks: tracks,
                widths: widths.isEmpty ? nil : widths, verified: item.state == .unreachable ? false : nil)
        }
        self.items = items
        self.missing = missing
        self.failed = failed
        self.unreachable = unreachable
    }

    /// Writes the index to `url` atomically (a reader sees the old index or the new one).
    public func write(to url: URL) throws(CatalogError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        do {
            try Durable.write(encoder.encode(self) + Data("\n".utf8), to: url.standardizedFileURL.path)
        } catch let error as CatalogError {
            throw error
        } catch {
            throw CatalogError(.storage, "cannot encode the index", url: url, underlying: error)
        }
    }
}
