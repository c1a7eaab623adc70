import Foundation

/// The parameters of an animation URL (`/{id}/animated.{gif,webp}`), read from its query as Mux's image API
/// documents them, every value checked: `start` (default 0), `end` (default 5 s after `start`, at most 10 s after
/// it), `width` and `height` (at most 640; neither gives 320 wide), `fps` (default 15, at most 30).
struct AnimationParameters: Hashable, Sendable {
    enum Format: String, Sendable {
        case gif
        case webp

        var mimeType: String { self == .gif ? "image/gif" : "image/webp" }
    }

    /// The longest span, in seconds.
    static let longestSpan = 10.0
    /// The largest width or height, in pixels.
    static let largestSide = 640
    /// The highest frame rate.
    static let highestRate = 30.0
    /// The span without `end`, and the width without `width` or `height`.
    static let defaultSpan = 5.0
    static let defaultWidth = 320

    var format: Format
    var start = 0.0
    /// `nil`: ``defaultSpan`` after `start`, or the video's end.
    var end: Double?
    var width: Int?
    var height: Int?
    var fps = 15.0

    /// Reads `query` (name to value; a name given twice counts its first value).
    init(format: Format, query: [(String, String)]) throws(ImageParameters.Problem) {
        self.format = format
        var values: [String: String] = [:]
        for (name, value) in query where values[name] == nil { values[name] = value }
        var problems: [String] = []
        for (name, keyPath) in [("start", \Self.start), ("fps", \Self.fps)] {
            guard let text = values[name] else { continue }
            let limit = name == "fps" ? Self.highestRate : 1e7
            if let value = Double(text), value.isFinite, value >= 0, value <= limit, name == "start" || value > 0 {
                self[keyPath: keyPath] = value
            } else if name == "fps" {
                problems.append(
                    "fps must be a number of frames a second above 0 and at most 30, not \(ImageParameters.shown(text))"
                )
            } else {
                problems.append("start must be a number of seconds from 0, not \(ImageParameters.shown(text))")
            }
        }
        if let text = values["end"] {
            if let value = Double(text), value.isFinite, value >= 0, value <= 1e7 {
                end = value
            } else {
                problems.append("end must be a number of seconds from 0, not \(ImageParameters.shown(text))")
            }
        }
        if let end, problems.isEmpty {
            if end <= start {
                problems.append("end (\(end)) must come after start (\(start))")
            } else if end - start > Self.longestSpan {
                problems.append("end must be at most 10 s after start, not \(end - start) s")
            }
        }
        (width, height) = ImageParameters.size(values, largest: Self.largestSide, problems: &problems)
        guard problems.isEmpty else { throw ImageParameters.Problem(messages: problems) }
    }

    /// The parameters in one fixed spelling (a cache key and the base of the `ETag`).
    var canonical: String {
        var parts = ["animated=\(format.rawValue)", "start=\(start)", "fps=\(fps)"]
        if let end { parts.append("end=\(end)") }
        if let width { parts.append("width=\(width)") }
        if let height { parts.append("height=\(height)") }
        return parts.joined(separator: "&")
    }

    /// The times of the frames of a video `duration` seconds long: `fps` a second from `start` to `end` (or the
    /// video's end).
    ///
    /// - Throws: ``ImageParameters/Problem`` when `start` is not before the video's end.
    func times(duration: Double) throws(ImageParameters.Problem) -> [Double] {
        guard start < duration else {
            throw ImageParameters.Problem(messages: ["start \(start) is not before the video's end (\(duration) s)"])
        }
        let last = min(end ?? start + Self.defaultSpan, duration)
        let count = max(1, Int(((last - start) * fps - 1e-9).rounded(.up)))
        return (0..<count).map { start + Double($0) / fps }
    }

    /// The size of each frame of a picture `size` big: inside `width` by `height`, aspect ratio kept; 320 wide
    /// when neither is given; never wider or taller than 640.
    func frameSize(of size: (width: Int, height: Int)) -> (width: Int, height: Int) {
        let (w, h) = (Double(max(1, size.width)), Double(max(1, size.height)))
        let scale: Double =
            switch (width, height) {
            case (nil, nil): Double(Self.defaultWidth) / w
            case (let width?, nil): Double(width) / w
            case (nil, let height?): Double(height) / h
            case (let width?, let height?): min(Double(width) / w, Double(height) / h)
            }
        let largest = Double(Self.largestSide)
        let fitted = min(scale, largest / w, largest / h)
        return (max(1, Int((w * fitted).rounded())), max(1, Int((h * fitted).rounded())))
    }
}
