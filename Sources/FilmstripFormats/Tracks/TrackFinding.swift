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

/// A width and height in pixels.
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

    /// `WxH`.
    public var description: String { "\(width)x\(height)" }
}
