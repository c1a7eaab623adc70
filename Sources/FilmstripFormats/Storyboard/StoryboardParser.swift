public import Foundation

/// Reads storyboard JSON in the two shapes players read:
///
/// - Mux's: `{"url", "tile_width", "tile_height", "duration", "tiles": [{"start", "x", "y"}]}`: every tile is a
///   `tile_width x tile_height` region of the one sheet at its `x`/`y`, shown until the next tile's `start` (the
///   last until `duration`).
/// - The object array: `[{"url", "startTime", "endTime"?, "width"?, "height"?, "coords"?: {"x", "y"}}]`: any
///   number of sheets; a missing `endTime` runs to the next `startTime` (the last lasts as long as the one before
///   it); without `coords` the whole image is shown.
///
/// URLs resolve against the JSON's URL; unknown fields are ignored.
public struct StoryboardParser: Sendable {
    /// Why a storyboard could not be read.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// A human-readable explanation.
        public var message: String
        /// The entry concerned (0-based), when one is.
        public var entry: Int?
        /// `storyboard entry N: message`.
        public var description: String { "storyboard\(entry.map { " entry \($0)" } ?? ""): \(message)" }
    }

    /// The most entries accepted. Default 1,000,000.
    public var maximumEntries: Int

    /// Creates a parser.
    public init(maximumEntries: Int = 1_000_000) { self.maximumEntries = maximumEntries }

    private struct Mux: Decodable {
        struct Tile: Decodable {
            var start: Double
            var x: Double
            var y: Double
        }
        var url: String
        var tileWidth: Double
        var tileHeight: Double
        var duration: Double
        var tiles: [Tile]

        enum CodingKeys: String, CodingKey {
            case url, duration, tiles
            case tileWidth = "tile_width"
            case tileHeight = "tile_height"
        }
    }

    private struct Entry: Decodable {
        struct Coords: Decodable {
            var x: Double
            var y: Double
        }
        var url: String
        var startTime: Double
        var endTime: Double?
        var width: Double?
        var height: Double?
        var coords: Coords?
    }

    /// Parses storyboard JSON fetched from `url`.
    public func parse(_ data: Data, url: URL) throws(ParseError) -> ThumbnailTrack {
        let decoder = JSONDecoder()
        let trimmed = data.drop {
            $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 || $0 == 0xEF || $0 == 0xBB || $0 == 0xBF
        }
        if trimmed.first == 0x5B {  // '['
            let entries: [Entry]
            do {
                entries = try decoder.decode([Entry].self, from: data)
            } catch {
                throw ParseError(message: "not a storyboard array: \(Self.describe(error))")
            }
            return try track(entries, url: url)
        }
        let mux: Mux
        do {
            mux = try decoder.decode(Mux.self, from: data)
        } catch {
            throw ParseError(message: "not a storyboard: \(Self.describe(error))")
        }
        return try track(mux, url: url)
    }

    private func resolve(_ reference: String, against base: URL, entry: Int?) throws(ParseError) -> URL {
        guard !reference.isEmpty, let resolved = URL(string: reference, relativeTo: base)?.absoluteURL else {
            throw ParseError(message: "'\(reference)' is not a URL", entry: entry)
        }
        return resolved
    }

    private static func milliseconds(_ seconds: Double) -> Int64 { Int64((seconds * 1000).rounded()) }

    private func track(_ mux: Mux, url: URL) throws(ParseError) -> ThumbnailTrack {
        guard mux.tiles.count <= maximumEntries else {
            throw ParseError(message: "\(mux.tiles.count) tiles; the limit is \(maximumEntries)")
        }
        guard mux.tileWidth >= 1, mux.tileHeight >= 1, mux.tileWidth <= 1e6, mux.tileHeight <= 1e6 else {
            throw ParseError(message: "tile_width and tile_height must be positive")
        }
        guard mux.duration.isFinite, mux.duration > 0, mux.duration <= TimeBounds.maximumSeconds else {
            throw ParseError(message: "duration must be positive, at most \(Int(TimeBounds.maximumSeconds)) s")
        }
        let image = try resolve(mux.url, against: url, entry: nil)
        let tiles = mux.tiles.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }
        var cues: [ThumbnailCue] = []
        cues.reserveCapacity(tiles.count)
        // Every tile is checked before any is used: a tile's end is the next one's start.
        for (index, tile) in tiles {
            guard tile.start.isFinite, tile.start >= 0, tile.start <= TimeBounds.maximumSeconds, tile.x >= 0,
                tile.y >= 0,
                tile.x <= 1e7, tile.y <= 1e7
            else {
                throw ParseError(message: "a tile needs a non-negative start, x and y", entry: index)
            }
        }
        for (k, (_, tile)) in tiles.enumerated() {
            let end = k + 1 < tiles.count ? tiles[k + 1].element.start : mux.duration
            guard end > tile.start else { continue }  // a tile replaced at once, or past the duration
            cues.append(
                ThumbnailCue(
                    startMilliseconds: Self.milliseconds(tile.start), endMilliseconds: Self.milliseconds(end),
                    imageIndex: 0,
                    region: SpatialRegion(
                        x: Int32(tile.x.rounded()), y: Int32(tile.y.rounded()), width: Int32(mux.tileWidth.rounded()),
                        height: Int32(mux.tileHeight.rounded()))))
        }
        var track = ThumbnailTrack(sourceURL: url, cues: cues, images: [image])
        track.format = .json
        return track
    }

    private func track(_ entries: [Entry], url: URL) throws(ParseError) -> ThumbnailTrack {
        guard entries.count <= maximumEntries else {
            throw ParseError(message: "\(entries.count) entries; the limit is \(maximumEntries)")
        }
        let sorted = entries.enumerated().sorted {
            ($0.element.startTime, $0.offset) < ($1.element.startTime, $1.offset)
        }
        var images = ImageSlots<URL>()
        var cues: [ThumbnailCue] = []
        cues.reserveCapacity(sorted.count)
        for (k, (index, entry)) in sorted.enumerated() {
            guard entry.startTime.isFinite, entry.startTime >= 0, entry.startTime <= TimeBounds.latestCueTime else {
                throw ParseError(message: "startTime must be a number from 0 to 10^10", entry: index)
            }
            var end = entry.endTime
            if end == nil {
                if k + 1 < sorted.count {
                    end = sorted[k + 1].element.startTime
                } else if let previous = cues.last {
                    end = entry.startTime + previous.end - previous.start
                } else {
                    throw ParseError(message: "a single entry needs endTime", entry: index)
                }
            }
            guard let end, end.isFinite, end > entry.startTime, end <= TimeBounds.latestCueTime else {
                throw ParseError(message: "endTime must be after startTime", entry: index)
            }
            let slot = images.slot(for: try resolve(entry.url, against: url, entry: index))
            var region: SpatialRegion?
            if let coords = entry.coords {
                guard let w = entry.width, let h = entry.height, w >= 1, h >= 1, w <= 1e6, h <= 1e6, coords.x >= 0,
                    coords.y >= 0, coords.x <= 1e7, coords.y <= 1e7
                else {
                    throw ParseError(message: "coords need a positive width and height", entry: index)
                }
                region = SpatialRegion(
                    x: Int32(coords.x.rounded()), y: Int32(coords.y.rounded()), width: Int32(w.rounded()),
                    height: Int32(h.rounded()))
            }
            cues.append(
                ThumbnailCue(
                    startMilliseconds: Self.milliseconds(entry.startTime), endMilliseconds: Self.milliseconds(end),
                    imageIndex: slot, region: region))
        }
        var track = ThumbnailTrack(sourceURL: url, cues: cues, images: images.images)
        track.format = .json
        return track
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            return "'\(key.stringValue)' is missing\(Self.path(context))"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return "a value has the wrong type\(Self.path(context))"
        case DecodingError.dataCorrupted(let context):
            return "malformed JSON\(Self.path(context))"
        default:
            return "\(error)"
        }
    }

    private static func path(_ context: DecodingError.Context) -> String {
        let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return path.isEmpty ? "" : " at \(path)"
    }
}
