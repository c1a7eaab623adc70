public import Foundation

extension ThumbnailTrack {
    /// One sheet of a tiled image track: its resource (or part of one), its span, and how it is tiled.
    public struct Sheet: Sendable, Hashable {
        /// The image resource.
        public var url: URL
        /// The part of the resource, `nil` for all of it.
        public var byteRange: Range<Int64>?
        /// Start, seconds.
        public var start: Double
        /// Length, seconds.
        public var duration: Double
        /// Columns and rows; `nil` for one whole image.
        public var layout: Presentation.TileLayout?
        /// One tile's time; `nil` shares the sheet's duration equally among its tiles.
        public var tileDuration: Double?
        /// The sheet's pixel size as the source declares it, if it does.
        public var declaredSize: PixelSize?

        /// Creates a sheet.
        public init(
            url: URL, byteRange: Range<Int64>?, start: Double, duration: Double, layout: Presentation.TileLayout?,
            tileDuration: Double?, declaredSize: PixelSize? = nil
        ) {
            self.declaredSize = declaredSize
            self.url = url
            self.byteRange = byteRange
            self.start = start
            self.duration = duration
            self.layout = layout
            self.tileDuration = tileDuration
        }
    }

    /// A track of tiled sheets: tiles fill each sheet left to right, then top to bottom; tile *k* covers
    /// `[start + k·d, start + (k+1)·d)` cut to the sheet's end, and tiles that start at or after the sheet's end are
    /// empty. Past `maximumCues` tiles, the rest are left out and an error finding says so.
    public init(sheets: [Sheet], sourceURL: URL, format: ThumbnailFormat, maximumCues: Int = 1_000_000) {
        var images = ImageSlots<String>()
        var ranges: [Range<Int64>?] = []
        var sizes: [PixelSize?] = []
        var cues: [ThumbnailCue] = []
        // Times beyond ±10^12 s are not times; they are held there rather than trapping the conversion.
        func ms(_ seconds: Double) -> Int64 { Int64((min(max(seconds, -1e12), 1e12) * 1000).rounded()) }
        var truncated = false
        for sheet in sheets where sheet.duration > 0 && sheet.start.isFinite && sheet.duration.isFinite {
            guard cues.count < maximumCues else {
                truncated = true
                break
            }
            let key = sheet.url.absoluteString + (sheet.byteRange.map { "#\($0.lowerBound)-\($0.upperBound)" } ?? "")
            let (slot, added) = images.slot(for: key, url: sheet.url)
            if added {
                ranges.append(sheet.byteRange)
                sizes.append(sheet.declaredSize)
            }
            let end = sheet.start + sheet.duration
            guard let layout = sheet.layout, layout.columns > 0, layout.rows > 0, layout.columns > 1 || layout.rows > 1
            else {
                cues.append(
                    ThumbnailCue(startMilliseconds: ms(sheet.start), endMilliseconds: ms(end), imageIndex: slot))
                continue
            }
            let product = layout.columns.multipliedReportingOverflow(by: layout.rows)
            let count = product.overflow ? maximumCues : min(product.partialValue, maximumCues)
            let d = sheet.tileDuration ?? sheet.duration / Double(count)
            guard d > 0 else { continue }
            for k in 0..<count {
                guard cues.count < maximumCues else {
                    truncated = true
                    break
                }
                let start = sheet.start + Double(k) * d
                guard ms(start) < ms(end) else { break }
                cues.append(
                    ThumbnailCue(
                        startMilliseconds: ms(start), endMilliseconds: min(ms(start + d), ms(end)), imageIndex: slot,
                        tile: TileCell(
                            column: Int32(clamping: k % layout.columns), row: Int32(clamping: k / layout.columns),
                            columns: Int32(clamping: layout.columns), rows: Int32(clamping: layout.rows))))
            }
        }
        cues.sort { $0.startMilliseconds < $1.startMilliseconds }
        self.init(sourceURL: sourceURL, cues: cues, images: images.images)
        self.format = format
        imageByteRanges = ranges
        declaredImageSizes = sizes
        if truncated {
            findings.append(TrackFinding(.error, "the track has more than \(maximumCues) tiles; the rest are left out"))
        }
    }
}

extension HLSMediaPlaylist {
    /// An image media playlist (`EXT-X-IMAGES-ONLY`) as a thumbnail track: each segment one sheet over its `EXTINF`,
    /// tiled by the `EXT-X-TILES` before it (`DURATION` is one tile's time) or one whole image without; byte
    /// ranges kept; `EXT-X-GAP` segments hold no image but keep the timeline going.
    ///
    /// - Parameter start: the time of the first segment (a live playlist's window starts later than 0).
    public func thumbnailTrack(url: URL, startingAt start: Double = 0) -> ThumbnailTrack {
        var time = start
        var sheets: [ThumbnailTrack.Sheet] = []
        var findings: [TrackFinding] = []
        if targetDurationMissing {
            findings.append(
                TrackFinding(.warning, "the playlist has no EXT-X-TARGETDURATION (RFC 8216 requires one)"))
        }
        sheets.reserveCapacity(segments.count)
        for (index, segment) in segments.enumerated() {
            defer { time += segment.duration }
            let location = "segment \(index + 1) (\(segment.reference))"
            if !targetDurationMissing, segment.duration.rounded() > targetDuration {
                findings.append(
                    TrackFinding(
                        .warning,
                        "EXTINF \(segment.duration) is above EXT-X-TARGETDURATION \(Int(targetDuration)) (RFC 8216 "
                            + "requires the rounded EXTINF at most the target duration)", location: location))
            }
            guard !segment.gap else { continue }
            var declared: PixelSize?
            if let tiles = segment.tiles {
                declared = PixelSize(
                    width: tiles.resolution.width * tiles.columns, height: tiles.resolution.height * tiles.rows)
                // Unused tiles are normal on a last, partial sheet; before it they are declared and never shown.
                if index < segments.count - 1, let d = tiles.duration,
                    d * Double(tiles.columns * tiles.rows) > segment.duration + 0.0005
                {
                    let shown = Int((segment.duration / d).rounded(.up))
                    findings.append(
                        TrackFinding(
                            .warning,
                            "the \(tiles.columns)x\(tiles.rows) tiles of \(d) s run past the segment's \(segment.duration) s: "
                                + "only \(shown) of \(tiles.columns * tiles.rows) are shown", location: location))
                }
            }
            sheets.append(
                ThumbnailTrack.Sheet(
                    url: segment.uri, byteRange: segment.byteRange, start: time, duration: segment.duration,
                    layout: segment.tiles.map { Presentation.TileLayout(columns: $0.columns, rows: $0.rows) },
                    tileDuration: segment.tiles?.duration, declaredSize: declared))
        }
        var track = ThumbnailTrack(sheets: sheets, sourceURL: url, format: .hls)
        track.findings = findings + track.findings
        return track
    }
}
