import FilmstripImaging
import Foundation

/// The parameters of an image URL (`/{id}/thumbnail.{jpg,png,webp}`), read from its query as Mux's image API
/// documents them, every value checked: a bad one is named in the error, never clamped in silence.
struct ImageParameters: Hashable, Sendable {
    /// How the picture fills a box given by both `width` and `height`.
    enum FitMode: String, CaseIterable, Sendable {
        /// Fits inside the box, aspect ratio kept (the image may be smaller than the box on one side).
        case preserve
        /// Fills the box exactly, distorted.
        case stretch
        /// Fills the box, aspect ratio kept, the overflow cut off on both sides equally.
        case crop
        /// Fills the box, aspect ratio kept, the cut placed around the busiest part of the picture.
        case smartcrop
        /// Fits inside the box, aspect ratio kept, the rest of the box black.
        case pad
    }

    /// The largest width or height asked for, in pixels.
    static let largestSide = 3840
    /// The longest query string read (a longer one is refused whole).
    static let longestQuery = 2048

    var format: ImageFormat
    /// Seconds into the video; `nil` for the representative poster.
    var time: Double?
    var width: Int?
    var height: Int?
    var fitMode = FitMode.preserve
    var flipVertical = false
    var flipHorizontal = false
    /// Clockwise quarter turns: 0 to 3.
    var quarterTurns = 0
    /// `latest=true`: the frame at a live stream's edge.
    var latest = false

    /// A problem with the request: the parameters it names, and what is wrong with each.
    struct Problem: Error, Equatable {
        var messages: [String]
    }

    /// Reads `query` (name to value; a name given twice counts its first value) for an image in `format`.
    init(format: ImageFormat, query: [(String, String)]) throws(Problem) {
        self.format = format
        var values: [String: String] = [:]
        for (name, value) in query where values[name] == nil { values[name] = value }
        var problems: [String] = []
        if let text = values["time"] {
            if let t = Double(text), t.isFinite, t >= 0, t <= 1e7 {
                time = t
            } else {
                problems.append("time must be a number of seconds from 0, not \(Self.shown(text))")
            }
        }
        (width, height) = Self.size(values, largest: Self.largestSide, problems: &problems)
        if let text = values["fit_mode"] {
            if let mode = FitMode(rawValue: text) {
                fitMode = mode
            } else {
                let modes = FitMode.allCases.map(\.rawValue).joined(separator: ", ")
                problems.append("fit_mode must be one of \(modes), not \(Self.shown(text))")
            }
        }
        for (name, keyPath) in [("flip_v", \Self.flipVertical), ("flip_h", \Self.flipHorizontal), ("latest", \.latest)]
        {
            guard let text = values[name] else { continue }
            switch text {
            case "true": self[keyPath: keyPath] = true
            case "false": self[keyPath: keyPath] = false
            default: problems.append("\(name) must be true or false, not \(Self.shown(text))")
            }
        }
        if let text = values["rotate"] {
            switch text {
            case "90": quarterTurns = 1
            case "180": quarterTurns = 2
            case "270": quarterTurns = 3
            default: problems.append("rotate must be 90, 180 or 270, not \(Self.shown(text))")
            }
        }
        if latest, time != nil { problems.append("time and latest=true cannot be given together") }
        guard problems.isEmpty else { throw Problem(messages: problems) }
    }

    /// The largest picture the rendering needs, before the turn: the box when the picture is fitted inside it (one
    /// side given, `preserve`, `pad`), else the largest side each way. The decoder's scaler makes that size from the
    /// decoded frame at once, rather than a full-size picture the rendering then shrinks.
    var decodeBox: (width: Int, height: Int) {
        let largest = Self.largestSide
        let box: (Int, Int) =
            switch (width, height) {
            case (nil, nil): (largest, largest)
            case (let width?, nil): (width, largest)
            case (nil, let height?): (largest, height)
            case (let width?, let height?):
                fitMode == .preserve || fitMode == .pad ? (width, height) : (largest, largest)
            }
        return quarterTurns % 2 == 1 ? (box.1, box.0) : box
    }

    /// The parameters that change the image, in one fixed spelling (a cache key and the base of the `ETag`).
    var canonical: String {
        var parts = ["format=\(format.fileExtension)", "fit_mode=\(fitMode.rawValue)", "turns=\(quarterTurns)"]
        if let time { parts.append("time=\(time)") }
        if let width { parts.append("width=\(width)") }
        if let height { parts.append("height=\(height)") }
        if flipVertical { parts.append("flip_v") }
        if flipHorizontal { parts.append("flip_h") }
        if latest { parts.append("latest") }
        return parts.joined(separator: "&")
    }

    /// `width` and `height` from a query's values, each a whole number of pixels from 1 to `largest`.
    static func size(
        _ values: [String: String], largest: Int, problems: inout [String]
    ) -> (width: Int?, height: Int?) {
        let read = ["width", "height"].map { name -> Int? in
            guard let text = values[name] else { return nil }
            if let n = Int(text), (1...largest).contains(n) { return n }
            problems.append("\(name) must be a whole number of pixels from 1 to \(largest), not \(shown(text))")
            return nil
        }
        return (read[0], read[1])
    }

    /// A value as an error message quotes it: at most 40 characters.
    static func shown(_ text: String) -> String {
        "\"" + (text.count > 40 ? text.prefix(40) + "…" : text) + "\""
    }
}

extension ImageFormat {
    /// The image's file name extension in an image URL.
    var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .png: "png"
        case .webp: "webp"
        }
    }
}
