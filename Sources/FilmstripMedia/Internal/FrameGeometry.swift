package import FilmstripFormats
import FilmstripImaging

/// How a decoded picture becomes an image: the one place that applies the sample aspect ratio, fits a maximum size
/// and turns the picture by its display matrix (the extractor, stream frames, frame thumbnails and the player's
/// frames all convert through it).
package struct FrameGeometry: Sendable, Hashable {
    /// The size shown, sample aspect ratio applied, in display orientation (turned).
    let displayWidth: Int
    let displayHeight: Int
    /// The display matrix's orientation: clockwise quarter turns (0...3), plus 4 when the turned picture is then
    /// mirrored left to right (``Orientation``).
    let quarterTurns: Int

    /// The geometry of a coded picture of `codedWidth` x `codedHeight` whose samples are `sampleAspect` wide
    /// (`num/den`, ignored unless both are positive), turned clockwise by `quarterTurns`.
    init(codedWidth: Int, codedHeight: Int, sampleAspect: (num: Int, den: Int), quarterTurns: Int) {
        var width = Double(codedWidth)
        if sampleAspect.num > 0, sampleAspect.den > 0 {
            width = width * Double(sampleAspect.num) / Double(sampleAspect.den)
        }
        let w = max(1, Int(width.rounded()))
        let h = max(1, codedHeight)
        self.quarterTurns = Orientation.normalized(quarterTurns)
        (displayWidth, displayHeight) = Self.turned(w, h, by: self.quarterTurns)
    }

    /// The display size.
    var displaySize: (width: Int, height: Int) { (displayWidth, displayHeight) }

    /// `width` x `height` as seen after `quarterTurns` clockwise turns (swapped for an odd count).
    package static func turned(_ width: Int, _ height: Int, by quarterTurns: Int) -> (width: Int, height: Int) {
        quarterTurns & 1 == 1 ? (height, width) : (width, height)
    }

    /// The image's size: the display size fitted into `maximum` (keeping its aspect), in display orientation when
    /// `turning`, else in the coded orientation.
    package func outputSize(fittingIn maximum: PixelSize?, turning: Bool = true) -> (width: Int, height: Int) {
        var (w, h) = (displayWidth, displayHeight)
        if let maximum {
            let fitted = PixelSize(width: w, height: h).fitted(within: maximum)
            (w, h) = (fitted.width, fitted.height)
        }
        return turning ? (w, h) : Self.turned(w, h, by: quarterTurns)
    }

    /// Converts `frame` to RGB: scaled to the display size fitted into `maximum`, turned upright when `turning`.
    func image(
        _ frame: OwnedFrame, fittingIn maximum: PixelSize?, turning: Bool = true,
        converter: FrameConverter = FrameConverter()
    ) throws(MediaError) -> PixelBuffer {
        // Scaled in the coded orientation, then turned.
        let fitted = outputSize(fittingIn: maximum)
        let (w, h) = Self.turned(fitted.width, fitted.height, by: quarterTurns)
        return try converter.image(frame.pointer, width: w, height: h, quarterTurns: turning ? quarterTurns : 0)
    }
}

/// A display matrix's orientation as one integer, the form the converters take: clockwise quarter turns in the low
/// two bits, and 4 when the turned picture is mirrored left to right.
enum Orientation {
    /// `code` kept to 0...7: a code in 0...7 as it is; any other integer is a count of clockwise turns (taken
    /// modulo 4, negative counter-clockwise), not mirrored.
    static func normalized(_ code: Int) -> Int { (0...7).contains(code) ? code : ((code % 4) + 4) % 4 }

    /// `image` shown as `code` says.
    static func apply(_ code: Int, to image: PixelBuffer) -> PixelBuffer {
        image.rotated(quarterTurns: code & 3, mirrored: code & 4 != 0)
    }
}
