/// Why an MPD could not be read: the kind, the element and attribute concerned, and the line.
public struct DASHParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem.
    public enum Kind: String, Sendable, Hashable {
        /// Not an MPD (the root element is not `MPD`).
        case notAnMPD
        /// The XML itself is malformed.
        case malformedXML
        /// An attribute or element has a value that cannot be used.
        case malformed
        /// A required attribute or element is missing.
        case missing
        /// A feature Filmstrip does not handle (protected content, for example).
        case unsupported
        /// Refused on principle before any expansion: a DTD or an entity declaration.
        case refused
        /// Past the size or entry bound.
        case tooLarge
    }

    /// What kind of problem.
    public var kind: Kind
    /// A human-readable explanation.
    public var message: String
    /// The element concerned, if any.
    public var element: String?
    /// The attribute concerned, if any.
    public var attribute: String?
    /// 1-based line of the element, when known.
    public var line: Int?

    /// Creates an error.
    public init(
        _ kind: Kind, _ message: String, element: String? = nil, attribute: String? = nil, line: Int? = nil
    ) {
        self.kind = kind
        self.message = excerpted(message)
        self.element = element
        self.attribute = attribute
        self.line = line
    }

    /// `line 12: <Representation@bandwidth>: message`.
    public var description: String {
        var text = line.map { "line \($0): " } ?? ""
        if let element {
            text += "<\(element)\(attribute.map { "@\($0)" } ?? "")>: "
        }
        return text + message
    }
}
