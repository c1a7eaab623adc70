import FilmstripSync
public import Foundation

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// An HTTP transport on `URLSession`, with a delegate that enforces the size limit while bytes arrive, detects
/// truncated bodies and maps failures to ``LoadingError``: the default on Apple platforms (see
/// ``DefaultTransport``). On Linux, FoundationNetworking cannot bound a body that never ends, so the default there
/// is ``CurlDataLoader``.
public final class URLSessionDataLoader: DataLoading {
    private let session: URLSession
    private let delegate: SessionDelegate

    /// Creates a loader over a session built from `sessionConfiguration` (default: ephemeral, no URL cache; the
    /// disk cache is Filmstrip's own).
    public init(sessionConfiguration: URLSessionConfiguration? = nil) {
        let configuration =
            sessionConfiguration
            ?? {
                let c = URLSessionConfiguration.ephemeral
                c.urlCache = nil
                c.requestCachePolicy = .reloadIgnoringLocalCacheData
                c.httpMaximumConnectionsPerHost = 6
                return c
            }()
        delegate = SessionDelegate()
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        session.invalidateAndCancel()
    }

    public func load(_ url: URL, configuration: LoadingConfiguration) async throws -> LoadResponse {
        let started = Mutex<PendingRequest?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<LoadResponse, any Error>) in
                let request = start(url, configuration: configuration) { continuation.resume(with: $0) }
                started.withLock { $0 = request }
                // A cancellation that arrived before the request existed found nothing to cancel.
                if Task.isCancelled { request?.cancel() }
            }
        } onCancel: {
            started.withLock { $0 }?.cancel()
        }
    }

    /// Starts a request and calls `completion` once, on URLSession's delegate queue, never on Swift's cooperative
    /// pool.
    @discardableResult
    public func startLoad(
        _ url: URL, configuration: LoadingConfiguration,
        completion: @escaping @Sendable (Result<LoadResponse, any Error>) -> Void
    ) -> (any LoadHandle)? {
        start(url, configuration: configuration, completion: completion)
    }

    /// Starts a request; `nil` when it is refused at once (after calling `completion`). Under
    /// ``AddressPolicy/publicOnly`` the host is resolved and checked on a background queue first.
    private func start(
        _ url: URL, configuration: LoadingConfiguration,
        completion: @escaping @Sendable (Result<LoadResponse, any Error>) -> Void
    ) -> PendingRequest? {
        if let refusal = configuration.refusal(of: url) {
            completion(.failure(refusal))
            return nil
        }
        let pending = PendingRequest(delegate: delegate)
        guard configuration.addressPolicy != .any else {
            pending.started(dataTask(url, configuration: configuration, completion: completion))
            return pending
        }
        // Resolution blocks (seconds, for a name no server answers): on a thread of its own, so that it never
        // holds one of the few threads Dispatch's global queues run timers on.
        Thread.detachNewThread { [self] in
            if let reason = configuration.policyRefusal(host: url.host ?? "") {
                completion(.failure(LoadingError(.refused, url: url, "refused by the address policy: \(reason)")))
            } else if !pending.isCancelled {
                pending.started(dataTask(url, configuration: configuration, completion: completion))
            } else {
                completion(.failure(LoadingError(.cancelled, url: url, "the request was cancelled")))
            }
        }
        return pending
    }

    private func dataTask(
        _ url: URL, configuration: LoadingConfiguration,
        completion: @escaping @Sendable (Result<LoadResponse, any Error>) -> Void
    ) -> URLSessionTask {
        var request = URLRequest(url: url)
        // The idle timeout is enforced by the delegate (Linux's URLSession truncates sub-second intervals to
        // zero); URLSession's own timer is only a whole-second backstop behind it.
        request.timeoutInterval = (configuration.requestTimeout + 1).rounded(.up)
        for (name, value) in configuration.additionalHeaders { request.setValue(value, forHTTPHeaderField: name) }
        let task = session.dataTask(with: request)
        delegate.register(task, url: url, configuration: configuration, completion: completion)
        task.resume()
        // URLSession's resource timeout is per session; a per-request deadline needs its own timer.
        delegate.armDeadline(task, seconds: configuration.resourceTimeout)
        delegate.armIdleTimeout(task, seconds: configuration.requestTimeout)
        return task
    }
}

/// A request as a ``LoadHandle``: its URLSession task once started (after an address check, a moment later).
private final class PendingRequest: LoadHandle, Sendable {
    // @unchecked: the task is only handed to the delegate, which cancels it from any thread.
    private struct Started: @unchecked Sendable {
        var task: URLSessionTask?
        var cancelled = false
    }
    private let state = Mutex(Started())
    private let delegate: SessionDelegate

    init(delegate: SessionDelegate) { self.delegate = delegate }

    var isCancelled: Bool { state.withLock { $0.cancelled } }

    func started(_ task: URLSessionTask) {
        let cancelled = state.withLock { state -> Bool in
            state.task = task
            return state.cancelled
        }
        if cancelled { delegate.cancel(task, because: nil) }
    }

    func cancel() {
        let task = state.withLock { state -> URLSessionTask? in
            state.cancelled = true
            return state.task
        }
        if let task { delegate.cancel(task, because: nil) }
    }
}
