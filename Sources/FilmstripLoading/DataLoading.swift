public import Foundation

/// Fetches the bytes of one URL in one attempt: no retries and no caching (``ResourceLoader`` adds those).
///
/// ``DefaultTransport/shared`` is the default (libcurl on Linux, URLSession on Apple platforms); tests and apps can
/// supply their own.
public protocol DataLoading: Sendable {
    /// Loads the body of `url`, failing with a ``LoadingError`` for HTTP errors, limits and timeouts.
    func load(_ url: URL, configuration: LoadingConfiguration) async throws -> LoadResponse

    /// Starts a load and calls `completion` once; returns a handle that cancels it (`nil` when it ended at once).
    ///
    /// For callers on threads outside Swift concurrency that block their own thread until the bytes come (FFmpeg's
    /// I/O callbacks, a player's fetch thread). A transport with threads of its own completes there, so such a
    /// caller never depends on the cooperative pool having a thread free; the default implementation runs
    /// ``load(_:configuration:)`` in a detached task.
    @discardableResult
    func startLoad(
        _ url: URL, configuration: LoadingConfiguration,
        completion: @escaping @Sendable (Result<LoadResponse, any Error>) -> Void
    ) -> (any LoadHandle)?
}

/// A load under way, started by ``DataLoading/startLoad(_:configuration:completion:)``.
public protocol LoadHandle: Sendable {
    /// Cancels the load; its completion then reports a cancellation (or the result, if it came first).
    func cancel()
}

extension DataLoading {
    @discardableResult
    public func startLoad(
        _ url: URL, configuration: LoadingConfiguration,
        completion: @escaping @Sendable (Result<LoadResponse, any Error>) -> Void
    ) -> (any LoadHandle)? {
        let task = Task.detached {
            do {
                completion(.success(try await load(url, configuration: configuration)))
            } catch {
                completion(.failure(error))
            }
        }
        return TaskLoadHandle(task: task)
    }
}

/// The handle of work run as a task.
struct TaskLoadHandle: LoadHandle {
    let task: Task<Void, Never>
    func cancel() { task.cancel() }
}

/// A successful response.
public struct LoadResponse: Sendable {
    /// The body.
    public var data: Data
    /// The HTTP status (200 for file URLs).
    public var statusCode: Int
    /// Response headers, names lower-cased.
    public var headers: [String: String]

    /// Creates a response.
    public init(data: Data, statusCode: Int = 200, headers: [String: String] = [:]) {
        self.data = data
        self.statusCode = statusCode
        self.headers = headers
    }
}
