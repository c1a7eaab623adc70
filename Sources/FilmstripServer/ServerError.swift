import Foundation

/// A failure the server reports to a client, with the HTTP status it maps to and the cause kept as a value.
public struct ServerError: Error, Sendable, CustomStringConvertible {
    /// The HTTP status code.
    public var status: Int
    /// What went wrong, for the client.
    public var message: String
    /// The underlying error, when there is one.
    public var underlying: (any Error)?

    /// Creates an error.
    public init(status: Int, _ message: String, underlying: (any Error)? = nil) {
        self.status = status
        self.message = message
        self.underlying = underlying
    }

    public var description: String { message }

    init(_ error: VideoLibrary.ResolveError) {
        switch error {
        case .forbidden(let message): self.init(status: 403, message, underlying: error)
        case .notFound(let message): self.init(status: 404, message, underlying: error)
        }
    }
}
