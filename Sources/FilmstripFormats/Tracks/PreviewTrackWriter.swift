import Foundation

/// Where a generated preview track's thumbnails are: their times, and their sheets and cells.
public struct PreviewTrackLayout: Sendable, Hashable {
    /// The video's duration, seconds.
    public var duration: Double
    /// Each thumbnail's start and end, milliseconds (contiguous; the last ends at the duration).
    public var starts: [Int64]
    /// Each thumbnail's end, milliseconds.
    public var ends: [Int64]
    /// One tile's size.
    public var tileWidth: Int
    /// One tile's height.
    public var tileHeight: Int
    /// Columns of a sheet.
    public var columns: Int
    /// Rows of a full sheet.
    public var rows: Int
    /// The sheets' file names, relative to the track files.
    public var sheetNames: [String]
    /// Rows in each sheet's image (a last sheet may be cut after its last used row).
    public var sheetRows: [Int]

    /// Creates a layout.
    public init(
        duration: Double, starts: [Int64], ends: [Int64], tileWidth: Int, tileHeight: Int, columns: Int, rows: Int,
        sheetNames: [String], sheetRows: [Int]
    ) {
        self.duration = duration
        self.starts = starts
        self.ends = ends
        self.tileWidth = tileWidth
        self.tileHeight = tileHeight
        self.columns = columns
        self.rows = rows
        self.sheetNames = sheetNames
        self.sheetRows = sheetRows
    }

    /// Thumbnails per full sheet.
    public var perSheet: Int { columns * rows }
    /// Thumbnails.
    public var count: Int { starts.count }
    /// The thumbnails of sheet `s`.
    public func thumbnails(ofSheet s: Int) -> Range<Int> { (s * perSheet)..<min(count, (s + 1) * perSheet) }
    /// The pixel position of thumbnail `k` in its sheet.
    public func origin(of k: Int) -> (x: Int, y: Int) {
        let cell = k % perSheet
        return ((cell % columns) * tileWidth, (cell / columns) * tileHeight)
    }
}

/// One width of a generated track in a DASH image AdaptationSet.
public struct DASHImageRepresentation: Sendable, Hashable {
    /// The track's layout.
    public var layout: PreviewTrackLayout
    /// The sheets' `SegmentTemplate@media` (`$Number$` from 1), relative to the MPD.
    public var mediaTemplate: String
    /// Each sheet's size in bytes (the bandwidth is the largest over one sheet's time).
    public var sheetBytes: [Int]
    /// The Representation's `id`.
    public var id: String

    /// Creates a Representation.
    public init(layout: PreviewTrackLayout, mediaTemplate: String, sheetBytes: [Int], id: String = "thumbnails") {
        self.layout = layout
        self.mediaTemplate = mediaTemplate
        self.sheetBytes = sheetBytes
        self.id = id
    }

    /// One sheet's time, milliseconds: the first thumbnail's length times the thumbnails of a full sheet.
    public var sheetMilliseconds: Int64 {
        layout.count > 0 ? (layout.ends[0] - layout.starts[0]) * Int64(layout.perSheet) : 0
    }
}

/// A Period's place on the presentation timeline, milliseconds.
public struct DASHPeriodSpan: Sendable, Hashable {
    /// The Period's start.
    public var start: Int64
    /// Its length, when known (else to the end of the track).
    public var duration: Int64?

    /// Creates a span.
    public init(start: Int64, duration: Int64?) {
        self.start = start
        self.duration = duration
    }
}

/// Writes a generated preview track in every format players read. Pure text (and bytes for BIF); the generator
/// writes the files.
public enum PreviewTrackWriter {
    /// Seconds with up to three decimals, no trailing zeros (`12`, `2.5`, `0.04`).
    static func seconds(_ ms: Int64) -> String {
        let whole = ms / 1000
        let fraction = ms % 1000
        guard fraction != 0 else { return String(whole) }
        var digits = String(format: "%03d", fraction)
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(whole).\(digits)"
    }

    /// A WebVTT track with `#xywh=` regions.
    public static func webVTT(_ layout: PreviewTrackLayout) -> String {
        var text = "WEBVTT\n\n"
        text.reserveCapacity(layout.count * 72)
        for k in 0..<layout.count {
            let (x, y) = layout.origin(of: k)
            text += WebVTTTimestamp.string(milliseconds: layout.starts[k]) + " --> "
            text += WebVTTTimestamp.string(milliseconds: layout.ends[k]) + "\n"
            text +=
                "\(layout.sheetNames[k / layout.perSheet])#xywh=\(x),\(y),\(layout.tileWidth),\(layout.tileHeight)\n\n"
        }
        return text
    }

    /// The span of sheet `s`, milliseconds.
    static func span(_ layout: PreviewTrackLayout, sheet s: Int) -> (start: Int64, end: Int64) {
        let range = layout.thumbnails(ofSheet: s)
        return (layout.starts[range.lowerBound], layout.ends[range.upperBound - 1])
    }

    /// An HLS image media playlist: `EXT-X-VERSION:7`, `EXT-X-TARGETDURATION` the longest sheet rounded up,
    /// `EXT-X-IMAGES-ONLY`, then per sheet its time as `#EXTINF`, its `#EXT-X-TILES` (one tile's size and time, the
    /// sheet's layout) and its URI, in that order (Roku's and Apple's examples; Shaka Player reads the tiles of a sheet
    /// only when `EXT-X-TILES` follows `EXTINF`), and `EXT-X-ENDLIST`.
    public static func hlsImagePlaylist(_ layout: PreviewTrackLayout) -> String {
        let sheets = layout.sheetNames.indices
        let longest = sheets.map { span(layout, sheet: $0) }.map { $0.end - $0.start }.max() ?? 0
        var text = "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:\((longest + 999) / 1000)\n"
        text += "#EXT-X-PLAYLIST-TYPE:VOD\n#EXT-X-IMAGES-ONLY\n"
        let tile = layout.count > 0 ? layout.ends[0] - layout.starts[0] : 0
        for s in sheets {
            let (start, end) = span(layout, sheet: s)
            text += "#EXTINF:\(seconds(end - start)),\n"
            text += "#EXT-X-TILES:RESOLUTION=\(layout.tileWidth)x\(layout.tileHeight),"
            text += "LAYOUT=\(layout.columns)x\(layout.sheetRows[s]),DURATION=\(seconds(tile))\n"
            text += "\(layout.sheetNames[s])\n"
        }
        return text + "#EXT-X-ENDLIST\n"
    }

    /// The `EXT-X-IMAGE-STREAM-INF` line that adds the image playlist at `uri` to an existing master playlist
    /// (`BANDWIDTH`: the largest sheet's bits over its time).
    public static func imageStreamInf(_ layout: PreviewTrackLayout, uri: String, sheetBytes: [Int]) -> String {
        "#EXT-X-IMAGE-STREAM-INF:BANDWIDTH=\(peakBandwidth(layout, sheetBytes: sheetBytes)),"
            + "RESOLUTION=\(layout.tileWidth)x\(layout.tileHeight),"
            + "CODECS=\"\(imageMimeType(layout.sheetNames.first ?? "").dropFirst("image/".count))\",URI=\"\(uri)\""
    }

    /// The MIME type a sheet's file name (or template) names by its extension: `image/webp` or `image/png`, else
    /// `image/jpeg`.
    public static func imageMimeType(_ name: String) -> String {
        let ext = name.split(separator: ".").last.map { $0.lowercased() } ?? ""
        return ext == "webp" ? "image/webp" : ext == "png" ? "image/png" : "image/jpeg"
    }

    /// The peak bits per second of a track's sheets: the largest of each sheet's bits over its own time (what HLS
    /// `BANDWIDTH` and DASH `@bandwidth` both state).
    static func peakBandwidth(_ layout: PreviewTrackLayout, sheetBytes: [Int]) -> Int {
        var peak = 0
        for s in layout.sheetNames.indices where s < sheetBytes.count && layout.count > 0 {
            let (start, end) = span(layout, sheet: s)
            peak = max(peak, Int((Double(sheetBytes[s] * 8) / max(0.001, Double(end - start) / 1000)).rounded(.up)))
        }
        return peak
    }

    /// The image AdaptationSet (DASH-IF thumbnail tiles: one sheet per segment, `$Number$` from 1) to paste into an
    /// existing MPD's Period (its `id`, 1000, is an unsignedInt as the schema wants; change it if the Period uses
    /// it). Every sheet must have the full layout's size.
    public static func dashAdaptationSet(
        _ layout: PreviewTrackLayout, mediaTemplate: String, sheetBytes: [Int]
    ) -> String {
        dashAdaptationSet([
            DASHImageRepresentation(layout: layout, mediaTemplate: mediaTemplate, sheetBytes: sheetBytes)
        ])
    }

    /// The image AdaptationSet with one Representation per width. Each Representation carries its own
    /// `thumbnail_tile` EssentialProperty and SegmentTemplate: deployed players (Shaka Player, dash.js) read the tile
    /// layout from the Representation only, and a player must drop an AdaptationSet whose EssentialProperty it does
    /// not know, so the property is never written on the set.
    ///
    /// With `period`, the set covers that Period of a longer presentation; the sheets stay on the whole
    /// presentation's timeline (sheet n covers [(n-1)·S, n·S)). A Period that starts on a sheet boundary gets
    /// `SegmentTemplate@duration` with the `startNumber` of its first sheet: every player tested reads it right,
    /// including the last sheet of a Period that ends mid-sheet. A Period that starts inside a sheet cannot be
    /// described that way (a `@duration` template starts its first segment at the Period's start), so it gets a
    /// SegmentTimeline from the sheet that holds its start, with the Period's start as `presentationTimeOffset`.
    public static func dashAdaptationSet(
        _ representations: [DASHImageRepresentation], id: Int = 1000, period: DASHPeriodSpan? = nil
    ) -> String {
        let mimeType = imageMimeType(representations.first?.mediaTemplate ?? "")
        var text = "<AdaptationSet id=\"\(id)\" contentType=\"image\" mimeType=\"\(mimeType)\">\n"
        for representation in representations {
            let layout = representation.layout
            let sheetMs = representation.sheetMilliseconds
            let bandwidth = peakBandwidth(layout, sheetBytes: representation.sheetBytes)
            text += "  <Representation id=\"\(xmlEscaped(representation.id))\" bandwidth=\"\(bandwidth)\" "
            text += "width=\"\(layout.columns * layout.tileWidth)\" height=\"\(layout.rows * layout.tileHeight)\">\n"
            text += "    <EssentialProperty schemeIdUri=\"http://dashif.org/thumbnail_tile\" "
            text += "value=\"\(layout.columns)x\(layout.rows)\"/>\n"
            let media = xmlEscaped(representation.mediaTemplate)
            let start = period?.start ?? 0
            if let period, sheetMs > 0, start % sheetMs != 0 {
                let first = start / sheetMs
                let sheets = max(1, Int64(representation.layout.sheetNames.count))
                let periodEnd = period.duration.map { start + $0 } ?? (sheets * sheetMs)
                let last = max(first + 1, min(sheets, (periodEnd + sheetMs - 1) / sheetMs))
                text += "    <SegmentTemplate media=\"\(media)\" timescale=\"1000\" "
                text += "presentationTimeOffset=\"\(start)\" startNumber=\"\(first + 1)\">\n"
                text += "      <SegmentTimeline><S t=\"\(first * sheetMs)\" d=\"\(sheetMs)\""
                text += (last - first > 1 ? " r=\"\(last - first - 1)\"" : "") + "/></SegmentTimeline>\n"
                text += "    </SegmentTemplate>\n"
            } else {
                let number = sheetMs > 0 ? start / sheetMs + 1 : 1
                text += "    <SegmentTemplate media=\"\(media)\" timescale=\"1000\" duration=\"\(sheetMs)\" "
                text += "startNumber=\"\(number)\"/>\n"
            }
            text += "  </Representation>\n"
        }
        return text + "</AdaptationSet>"
    }

    /// A static MPD with the image AdaptationSet alone.
    public static func dashMPD(_ layout: PreviewTrackLayout, mediaTemplate: String, sheetBytes: [Int]) -> String {
        let set = dashAdaptationSet(layout, mediaTemplate: mediaTemplate, sheetBytes: sheetBytes)
            .split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }.joined(separator: "\n")
        let total = layout.ends.last ?? 0
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-live:2011" \
            type="static" mediaPresentationDuration="PT\(seconds(total))S" minBufferTime="PT2S">
              <Period id="0" start="PT0S">
            \(set)
              </Period>
            </MPD>

            """
    }

    /// The object array players read: `[{url, startTime, endTime, width, height, coords: {x, y}}]`.
    public static func jsonObjects(_ layout: PreviewTrackLayout) -> String {
        var entries: [String] = []
        entries.reserveCapacity(layout.count)
        for k in 0..<layout.count {
            let (x, y) = layout.origin(of: k)
            entries.append(
                "{\"url\":\"\(jsonEscaped(layout.sheetNames[k / layout.perSheet]))\",\"startTime\":\(seconds(layout.starts[k])),"
                    + "\"endTime\":\(seconds(layout.ends[k])),\"width\":\(layout.tileWidth),\"height\":\(layout.tileHeight),"
                    + "\"coords\":{\"x\":\(x),\"y\":\(y)}}")
        }
        return "[\n" + entries.joined(separator: ",\n") + "\n]\n"
    }

    /// Mux's storyboard schema for one sheet: `url`, `tile_width`, `tile_height`, `duration`, `tiles[{start, x, y}]`.
    public static func storyboard(
        url: String, tileWidth: Int, tileHeight: Int, duration: Double, tiles: [(start: Int64, x: Int, y: Int)]
    ) -> String {
        let list = tiles.map { "{\"start\":\(seconds($0.start)),\"x\":\($0.x),\"y\":\($0.y)}" }
        return "{\"url\":\"\(jsonEscaped(url))\",\"tile_width\":\(tileWidth),\"tile_height\":\(tileHeight),"
            + "\"duration\":\(seconds(Int64((duration * 1000).rounded()))),\"tiles\":[\n"
            + list.joined(separator: ",\n") + "\n]}\n"
    }

    /// A Roku BIF of JPEG `images` shown from `starts` (milliseconds): the multiplier is 1000 when every start is a
    /// whole second, else 1.
    public static func bif(images: [[UInt8]], starts: [Int64]) -> [UInt8] {
        let multiplier: Int64 = starts.allSatisfy { $0 % 1000 == 0 } ? 1000 : 1
        func u32(_ v: UInt32) -> [UInt8] {
            [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8(v >> 24)]
        }
        var out = BIFParser.magic + u32(0) + u32(UInt32(images.count)) + u32(UInt32(multiplier))
        out += [UInt8](repeating: 0, count: 64 - out.count)
        out.reserveCapacity(out.count + (images.count + 1) * 8 + images.reduce(0) { $0 + $1.count })
        var offset = UInt32(64 + (images.count + 1) * 8)
        for (image, start) in zip(images, starts) {
            out += u32(UInt32(clamping: start / multiplier)) + u32(offset)
            offset += UInt32(image.count)
        }
        out += u32(0xFFFF_FFFF) + u32(offset)
        for image in images { out += image }
        return out
    }

    static func jsonEscaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    static func xmlEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }
}
