/// Builds WebVTT thumbnail tracks as text.
public enum TrackFixture {
    /// A timestamp in `hh:mm:ss.ttt` form.
    public static func timestamp(milliseconds: Int64) -> String {
        let ms = milliseconds % 1000
        let totalSeconds = milliseconds / 1000
        let s = totalSeconds % 60
        let m = (totalSeconds / 60) % 60
        let h = totalSeconds / 3600
        func pad(_ v: Int64, _ width: Int) -> String {
            let text = String(v)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(h, 2)):\(pad(m, 2)):\(pad(s, 2)).\(pad(ms, 3))"
    }

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
