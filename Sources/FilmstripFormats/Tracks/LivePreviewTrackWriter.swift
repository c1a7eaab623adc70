public import Foundation

/// One sheet of a live preview track: a fixed span of the track's timeline, published once and never changed.
public struct LiveSheet: Sendable, Hashable, Codable {
    /// The sheet's number: its span's index on the timeline plus one (`start / span + 1` when the spans are
    /// counted from the timeline's 0; from a run's origin, the spans before the origin plus the index from it).
    /// Numbers never go backwards; the HLS playlist's media sequence is the first sheet's number.
    public var number: Int64
    /// The sheet's file name, relative to the track files; `nil` when every tile of its span is missing (a gap).
    public var name: String?
    /// The span's start on the track's timeline, milliseconds.
    public var start: Int64
    /// Tiles in the sheet: the span's tiles, or fewer for the last sheet of a stream that ended.
    public var tiles: Int
    /// Tiles of the sheet with no picture (the source had no media for their time), by position in the sheet.
    public var missing: [Int]
    /// Rows in the sheet's image.
    public var rows: Int
    /// The image's size in bytes.
    public var bytes: Int
    /// With an I-frame image sequence: the byte length of each picture's fragment in the sheet's media file
    /// (``LivePreviewTrackWriter/iFrameImagesMedia(_:)``), in tile order, missing tiles left out.
    public var fragments: [Int]?

    /// Creates a sheet.
    public init(
        number: Int64, name: String?, start: Int64, tiles: Int, missing: [Int], rows: Int, bytes: Int,
        fragments: [Int]? = nil
    ) {
        self.number = number
        self.name = name
        self.start = start
        self.tiles = tiles
        self.missing = missing
        self.rows = rows
        self.bytes = bytes
        self.fragments = fragments
    }

    /// Whether the sheet has no picture at all.
    public var isGap: Bool { name == nil }
}

/// What a live preview track holds at one publication: the sheets in its window and how they are cut.
public struct LivePreviewLayout: Sendable, Hashable {
    /// The sheets in the window, oldest first, numbers consecutive.
    public var sheets: [LiveSheet]
    /// One tile's width.
    public var tileWidth: Int
    /// One tile's height.
    public var tileHeight: Int
    /// Columns of a sheet.
    public var columns: Int
    /// Milliseconds per tile.
    public var interval: Int64
    /// Milliseconds per sheet (a whole number of tiles).
    public var span: Int64
    /// Whether the stream ended (the tracks are then VOD tracks).
    public var ended: Bool
    /// Whether the timeline is the source's program date (milliseconds since 1970), so the HLS playlist carries
    /// `EXT-X-PROGRAM-DATE-TIME`.
    public var programDates: Bool

    /// Creates a layout.
    public init(
        sheets: [LiveSheet], tileWidth: Int, tileHeight: Int, columns: Int, interval: Int64, span: Int64,
        ended: Bool, programDates: Bool
    ) {
        self.sheets = sheets
        self.tileWidth = tileWidth
        self.tileHeight = tileHeight
        self.columns = columns
        self.interval = interval
        self.span = span
        self.ended = ended
        self.programDates = programDates
    }

    /// Every tile with a picture: its start, its sheet and its cell.
    public var tiles: [(start: Int64, sheet: String, x: Int, y: Int)] {
        var out: [(start: Int64, sheet: String, x: Int, y: Int)] = []
        for sheet in sheets {
            guard let name = sheet.name else { continue }
            let missing = Set(sheet.missing)
            for i in 0..<sheet.tiles where !missing.contains(i) {
                out.append(
                    (sheet.start + Int64(i) * interval, name, (i % columns) * tileWidth, (i / columns) * tileHeight))
            }
        }
        return out
    }
}

/// Writes the files of a live preview track: a live HLS image playlist and WebVTT and JSON sidecars whose cues
/// are the tiles in the window. Pure text; the live generator writes the files.
public enum LivePreviewTrackWriter {
    /// WebVTT with one cue per tile that has a picture (a missing tile has no cue).
    public static func webVTT(_ layout: LivePreviewLayout) -> String {
        var text = "WEBVTT\n\n"
        for tile in layout.tiles {
            text += WebVTTTimestamp.string(milliseconds: tile.start) + " --> "
            text += WebVTTTimestamp.string(milliseconds: tile.start + layout.interval) + "\n"
            text += "\(tile.sheet)#xywh=\(tile.x),\(tile.y),\(layout.tileWidth),\(layout.tileHeight)\n\n"
        }
        return text
    }

    /// The JSON object array, one object per tile that has a picture.
    public static func jsonObjects(_ layout: LivePreviewLayout) -> String {
        let objects = layout.tiles.map { tile in
            "{\"url\":\"\(PreviewTrackWriter.jsonEscaped(tile.sheet))\","
                + "\"startTime\":\(PreviewTrackWriter.seconds(tile.start)),"
                + "\"endTime\":\(PreviewTrackWriter.seconds(tile.start + layout.interval)),"
                + "\"width\":\(layout.tileWidth),\"height\":\(layout.tileHeight),"
                + "\"coords\":{\"x\":\(tile.x),\"y\":\(tile.y)}}"
        }
        return "[" + objects.joined(separator: ",\n") + "]\n"
    }

    /// A live HLS image media playlist: the window's sheets, `EXT-X-MEDIA-SEQUENCE` the first one's number, each
    /// with its `EXT-X-TILES` (and `EXT-X-PROGRAM-DATE-TIME` on a program-date timeline); a sheet with no picture is
    /// an `EXT-X-GAP` segment. No `EXT-X-ENDLIST` until the stream ends.
    public static func hlsPlaylist(_ layout: LivePreviewLayout) -> String {
        let longest = layout.sheets.map { Int64($0.tiles) * layout.interval }.max() ?? layout.span
        var text = "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:\((max(longest, 1) + 999) / 1000)\n"
        text += "#EXT-X-MEDIA-SEQUENCE:\(layout.sheets.first?.number ?? 0)\n"
        text += "#EXT-X-IMAGES-ONLY\n"
        for sheet in layout.sheets {
            let length = Int64(sheet.tiles) * layout.interval
            if layout.programDates { text += programDateTime(sheet.start) }
            if sheet.isGap { text += "#EXT-X-GAP\n" }
            text += "#EXTINF:\(PreviewTrackWriter.seconds(length)),\n"
            let rows = max(1, sheet.rows)
            text += "#EXT-X-TILES:RESOLUTION=\(layout.tileWidth)x\(layout.tileHeight),"
            text += "LAYOUT=\(layout.columns)x\(rows),DURATION=\(PreviewTrackWriter.seconds(layout.interval))\n"
            text += "\(sheet.name ?? "gap-\(sheet.number)")\n"
        }
        return text + (layout.ended ? "#EXT-X-ENDLIST\n" : "")
    }

    /// The `EXT-X-PROGRAM-DATE-TIME` line of a time on a program-date timeline (milliseconds since 1970).
    static func programDateTime(_ milliseconds: Int64) -> String {
        let dates = ISO8601DateFormatter()
        dates.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return
            "#EXT-X-PROGRAM-DATE-TIME:\(dates.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000)))\n"
    }
}

extension LivePreviewTrackWriter {
    /// The image AdaptationSet of a live track (DASH-IF thumbnail tiles): a `$Number$` template over a
    /// SegmentTimeline of the window's sheets, rewritten at each publication, so a client computes as available only
    /// sheets that are published. Every sheet is written at the full layout's size (players divide the image by the
    /// layout) and lasts one span (the presentation's end cuts the last). A gap sheet keeps its place in the timeline
    /// (numbers stay consecutive) and has no file. `presentationTimeOffset` (ms) puts the track's times on the
    /// timeline of the Period that holds the set.
    public static func dashAdaptationSet(
        _ layout: LivePreviewLayout, mediaTemplate: String, rows: Int, presentationTimeOffset: Int64 = 0,
        id: Int = 1000
    ) -> String {
        let mimeType = PreviewTrackWriter.imageMimeType(mediaTemplate)
        let biggest = layout.sheets.map(\.bytes).max() ?? 0
        let bandwidth = Int((Double(biggest * 8) / Swift.max(0.001, Double(layout.span) / 1000)).rounded(.up))
        var text = "<AdaptationSet id=\"\(id)\" contentType=\"image\" mimeType=\"\(mimeType)\">\n"
        text += "  <Representation id=\"thumbnails\" bandwidth=\"\(Swift.max(1, bandwidth))\" "
        text += "width=\"\(layout.columns * layout.tileWidth)\" height=\"\(rows * layout.tileHeight)\">\n"
        text += "    <EssentialProperty schemeIdUri=\"http://dashif.org/thumbnail_tile\" "
        text += "value=\"\(layout.columns)x\(rows)\"/>\n"
        text += "    <SegmentTemplate media=\"\(PreviewTrackWriter.xmlEscaped(mediaTemplate))\" timescale=\"1000\" "
        text +=
            "presentationTimeOffset=\"\(presentationTimeOffset)\" startNumber=\"\(layout.sheets.first?.number ?? 1)\">\n"
        text += "      <SegmentTimeline>"
        if let first = layout.sheets.first {
            let repeats = layout.sheets.count - 1
            text += "<S t=\"\(first.start)\" d=\"\(layout.span)\"" + (repeats > 0 ? " r=\"\(repeats)\"" : "") + "/>"
        }
        text += "</SegmentTimeline>\n    </SegmentTemplate>\n  </Representation>\n</AdaptationSet>"
        return text
    }

    /// An image-only MPD of the live track. While the stream is live: `type="dynamic"` with the source's
    /// `availabilityStartTime` (`availabilityStart`; the track's times are presentation times from it), a Period
    /// at 0, `minimumUpdatePeriod` one sheet span and `timeShiftBufferDepth` the window. Once the stream ended:
    /// `type="static"`, the window's first sheet at time 0.
    public static func dashMPD(
        _ layout: LivePreviewLayout, mediaTemplate: String, rows: Int, availabilityStart: Date, publishTime: Date,
        window: Double
    ) -> String {
        let dates = ISO8601DateFormatter()
        dates.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let first = layout.sheets.first?.start ?? 0
        let end = layout.sheets.last.map { $0.start + Int64($0.tiles) * layout.interval } ?? first
        let head: String
        let offset: Int64
        if layout.ended {
            head = "type=\"static\" mediaPresentationDuration=\"PT\(PreviewTrackWriter.seconds(end - first))S\""
            offset = first
        } else {
            head =
                "type=\"dynamic\" availabilityStartTime=\"\(dates.string(from: availabilityStart))\" "
                + "publishTime=\"\(dates.string(from: publishTime))\" "
                + "minimumUpdatePeriod=\"PT\(PreviewTrackWriter.seconds(layout.span))S\" "
                + "timeShiftBufferDepth=\"PT\(PreviewTrackWriter.seconds(Int64((window * 1000).rounded())))S\""
            offset = 0
        }
        let set = dashAdaptationSet(layout, mediaTemplate: mediaTemplate, rows: rows, presentationTimeOffset: offset)
            .split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }.joined(separator: "\n")
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-live:2011" \
            \(head) minBufferTime="PT2S">
              <Period id="0" start="PT0S">
            \(set)
              </Period>
            </MPD>

            """
    }
}
