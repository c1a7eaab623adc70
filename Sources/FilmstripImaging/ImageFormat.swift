/// An encoded image format Filmstrip reads and writes.
public enum ImageFormat: String, Sendable, Hashable, CaseIterable, Codable {
    /// JPEG (libjpeg-turbo).
    case jpeg
    /// PNG (libpng).
    case png
    /// WebP (libwebp).
    case webp

    /// Recognises a format by its signature bytes.
    public static func sniff(_ bytes: some Collection<UInt8>) -> ImageFormat? {
        var iterator = bytes.makeIterator()
        let head = (0..<12).compactMap { _ in iterator.next() }
        if head.count >= 3, head[0] == 0xFF, head[1] == 0xD8, head[2] == 0xFF { return .jpeg }
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        // RIFF, a 4-byte size, WEBP.
        if head.count == 12, head[0..<4].elementsEqual("RIFF".utf8), head[8..<12].elementsEqual("WEBP".utf8) {
            return .webp
        }
        return nil
    }

    /// The MIME type.
    public var mimeType: String { "image/" + rawValue }
    /// The usual file extension.
    public var fileExtension: String { self == .jpeg ? "jpg" : rawValue }

    /// The format a file name's extension names (`jpg`, `jpeg`, `png`, `webp`, any case), if any.
    public init?(fileExtension: String) {
        switch fileExtension.lowercased() {
        case "jpg", "jpeg": self = .jpeg
        case "png": self = .png
        case "webp": self = .webp
        default: return nil
        }
    }
}

/// What an image's header says, read without decoding any pixels.
public struct ImageInfo: Sendable, Hashable {
    /// The format.
    public var format: ImageFormat
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// Creates an info value.
    public init(format: ImageFormat, width: Int, height: Int) {
        self.format = format
        self.width = width
        self.height = height
    }

    /// `width * height`.
    public var pixelCount: Int { width * height }
}

/// Limits applied before decoding.
public struct ImageLimits: Sendable, Hashable {
    /// The largest image, in pixels, that may be decoded. Default 50 megapixels.
    public var maximumPixelCount: Int

    /// Creates limits.
    public init(maximumPixelCount: Int = 50_000_000) {
        self.maximumPixelCount = maximumPixelCount
    }

    /// The default limits.
    public static let `default` = ImageLimits()

    func check(_ info: ImageInfo) throws(ImagingError) {
        guard info.width > 0, info.height > 0 else {
            throw ImagingError(.corrupt, "the \(info.format.rawValue) header declares an empty image")
        }
        guard info.width.multipliedReportingOverflow(by: info.height).partialValue <= maximumPixelCount,
            info.width <= maximumPixelCount, info.height <= maximumPixelCount
        else {
            throw ImagingError(
                .tooLarge,
                "the image is \(info.width)x\(info.height) (\(info.width * info.height / 1_000_000) megapixels); "
                    + "the limit is \(maximumPixelCount / 1_000_000) megapixels")
        }
    }
}
