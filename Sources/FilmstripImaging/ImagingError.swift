/// Why an image could not be decoded, encoded or transformed.
public struct ImagingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public enum Kind: String, Sendable, Hashable {
        /// The bytes are not a JPEG or PNG image.
        case unrecognizedFormat
        /// The header declares more pixels than the configured limit; nothing was allocated for them.
        case tooLarge
        /// The image is damaged or truncated.
        case corrupt
        /// The encoder failed.
        case encodingFailed
        /// A crop rectangle does not lie inside the image, or a target size is not positive.
        case invalidGeometry
    }

    /// The kind of failure.
    public var kind: Kind
    /// A human-readable explanation, including the codec's own message where there is one.
    public var message: String

    /// Creates an error.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
