import FilmstripFormats

/// Builds WebVTT thumbnail tracks as text.
public enum TrackFixture {
    /// A timestamp in `hh:mm:ss.ttt` form.
    public static func timestamp(milliseconds: Int64) -> String { WebVTTTimestamp.string(milliseconds: milliseconds) }

    /// A sprite track: `count` contiguous cues of `interval` seconds; cue `k` is cell `k % (columns * rows)` of
    /// sheet `k / (columns * rows) + 1`, referenced as `sheetName(n)#xywh=x,y,w,h`.
    public static func sprites(
        count: Int, interval: Double = 1, columns: Int = 10, rows: Int = 10, cellWidth: Int = 160,
        cellHeight: Int = 90, sheetName: (Int) -> String = { "sprite-\($0).jpg" }
    ) -> String {
        // Written by the same writer as generated tracks: WebVTT is written in one place.
        let perSheet = columns * rows
        let step = Int64((interval * 1000).rounded())
        let sheets = (count + perSheet - 1) / perSheet
        let layout = PreviewTrackLayout(
            duration: Double(Int64(count) * step) / 1000, starts: (0..<count).map { Int64($0) * step },
            ends: (0..<count).map { Int64($0 + 1) * step }, tileWidth: cellWidth, tileHeight: cellHeight,
            columns: columns, rows: rows, sheetNames: (0..<sheets).map { sheetName($0 + 1) },
            sheetRows: Array(repeating: rows, count: sheets))
        return PreviewTrackWriter.webVTT(layout)
    }
}
