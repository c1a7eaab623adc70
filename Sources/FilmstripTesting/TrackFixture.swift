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
        var text = "WEBVTT\n\n"
        text.reserveCapacity(count * 80)
        let perSheet = columns * rows
        let step = Int64((interval * 1000).rounded())
        for k in 0..<count {
            let cell = k % perSheet
            let x = (cell % columns) * cellWidth
            let y = (cell / columns) * cellHeight
            text += timestamp(milliseconds: Int64(k) * step) + " --> " + timestamp(milliseconds: Int64(k + 1) * step)
            text += "\n\(sheetName(k / perSheet + 1))#xywh=\(x),\(y),\(cellWidth),\(cellHeight)\n\n"
        }
        return text
    }
}
