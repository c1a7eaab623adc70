public import Foundation

/// Something in a thumbnail track that players trip over, found while reading it or by checking its images.
public struct TrackFinding: Sendable, Hashable, CustomStringConvertible {
    /// How bad it is.
    public enum Severity: String, Sendable, Hashable {
        /// Players cope, some badly (a gap, an overlap, a sheet wider than a device decodes).
        case warning
        /// An image contradicts its track (a region outside the image, a layout that does not fit the sheet).
        case error
    }

    /// How bad it is.
    public var severity: Severity
    /// A human-readable explanation.
    public var message: String
    /// Where: a line, an element or a segment (`line 12`, `segment 4`, `<Representation id="t">`).
    public var location: String?
    /// The image concerned, if one is.
    public var image: URL?

    /// Creates a finding.
    public init(_ severity: Severity, _ message: String, location: String? = nil, image: URL? = nil) {
        self.severity = severity
        self.message = message
        self.location = location
        self.image = image
    }

    /// `warning: location: message`.
    public var description: String {
        "\(severity.rawValue): " + (location.map { "\($0): " } ?? "") + message
    }
}

/// A width and height in pixels: the one size type of the package (an image, a tile, a video, a playlist's
/// `RESOLUTION`).
public struct PixelSize: Sendable, Hashable, CustomStringConvertible {
    /// Width.
    public var width: Int
    /// Height.
    public var height: Int

    /// Creates a size.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// Parses `WxH`, as in `320x180` (both positive).
    public init?(_ text: String) {
        let parts = text.lowercased().split(separator: "x")
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0 else { return nil }
        self.init(width: w, height: h)
    }

    /// `WxH`.
    public var description: String { "\(width)x\(height)" }

    /// This size shrunk to fit inside `maximum`, keeping the aspect ratio (never enlarged; at least 1 x 1).
    public func fitted(within maximum: PixelSize) -> PixelSize {
        guard width > maximum.width || height > maximum.height else { return self }
        let scale = min(Double(maximum.width) / Double(width), Double(maximum.height) / Double(height))
        return PixelSize(
            width: max(1, Int((Double(width) * scale).rounded())),
            height: max(1, Int((Double(height) * scale).rounded())))
    }
}
