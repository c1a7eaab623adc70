/// Formats WebVTT timestamps.
public enum WebVTTTimestamp {
    /// `hh:mm:ss.ttt` for a non-negative number of milliseconds (hours grow past two digits when needed).
    public static func string(milliseconds: Int64) -> String {
        let ms = max(0, milliseconds)
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
        }
        return
            "\(pad(ms / 3_600_000, 2)):\(pad((ms / 60_000) % 60, 2)):\(pad((ms / 1000) % 60, 2)).\(pad(ms % 1000, 3))"
    }
}
