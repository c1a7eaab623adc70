/// A rectangle in pixels, origin at the top-left corner of the image.
public struct PixelRect: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Left edge in pixels.
    public var x: Int
    /// Top edge in pixels.
    public var y: Int
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// Creates a rectangle.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// Whether the rectangle lies wholly inside an image of the given size.
    public func fits(width imageWidth: Int, height imageHeight: Int) -> Bool {
        x >= 0 && y >= 0 && width > 0 && height > 0 && x + width <= imageWidth && y + height <= imageHeight
    }

    /// `x,y,w,h`.
    public var description: String { "\(x),\(y),\(width),\(height)" }
}

/// A W3C Media Fragments spatial region (`#xywh=`), in pixels or in percent of the image size.
///
/// The legacy `#x,y,w,h` form found in older thumbnail tracks parses to a pixel region.
public struct SpatialRegion: Sendable, Hashable {
    /// The unit of the four values.
    public enum Unit: Sendable, Hashable {
        /// Values are pixels.
        case pixel
        /// Values are percent of the image width (x, w) and height (y, h).
        case percent
    }

    /// The unit of the values.
    public var unit: Unit
    /// Left edge.
    public var x: Int32
    /// Top edge.
    public var y: Int32
    /// Width, greater than zero.
    public var width: Int32
    /// Height, greater than zero.
    public var height: Int32

    /// Creates a region.
    public init(unit: Unit = .pixel, x: Int32, y: Int32, width: Int32, height: Int32) {
        self.unit = unit
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The region in pixels inside an image of the given size, clamped to the image.
    ///
    /// Percent values map the origin down and the far edge up, so adjacent percent regions tile without gaps.
    /// Returns `nil` when the region starts outside the image (nothing of it is visible).
    public func resolved(imageWidth: Int, imageHeight: Int) -> PixelRect? {
        var x0: Int
        var y0: Int
        var x1: Int
        var y1: Int
        switch unit {
        case .pixel:
            x0 = Int(x)
            y0 = Int(y)
            x1 = x0 + Int(width)
            y1 = y0 + Int(height)
        case .percent:
            x0 = Int(x) * imageWidth / 100
            y0 = Int(y) * imageHeight / 100
            x1 = ((Int(x) + Int(width)) * imageWidth + 99) / 100
            y1 = ((Int(y) + Int(height)) * imageHeight + 99) / 100
        }
        guard x0 < imageWidth, y0 < imageHeight else { return nil }
        x1 = min(x1, imageWidth)
        y1 = min(y1, imageHeight)
        guard x1 > x0, y1 > y0 else { return nil }
        return PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }
}

extension SpatialRegion: CustomStringConvertible {
    /// The fragment form, such as `xywh=percent:0,0,50,50`.
    public var description: String {
        let prefix = unit == .percent ? "percent:" : ""
        return "xywh=\(prefix)\(x),\(y),\(width),\(height)"
    }
}
