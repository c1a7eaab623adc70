import FilmstripSync
import Foundation

extension DataLoading {
    /// Starts `request`, trying it again after transient failures (``LoadingError/isTransient``) as
    /// `configuration.retry` says: the one retry loop that tracks, manifests, segments and progressive reads share.
    /// `completion` is called once, with the last attempt's result; `attempted` before each attempt (1, 2, …).
    /// When `exact`, a response's body is exactly the bytes asked for (``ByteRangeRequest/body(of:)``; a short
    /// `206` is a truncated body, tried again); otherwise it is what the server sent.
    ///
    /// Waits between attempts run on a dispatch timer, so a caller that blocks its own thread on the completion
    /// (FFmpeg's I/O, a player's thread) never needs a free thread in Swift's cooperative pool. The returned handle
    /// cancels the attempt under way or the wait.
    @discardableResult
    public func startLoad(
        _ request: ByteRangeRequest, configuration: LoadingConfiguration, exact: Bool = true,
        attempted: @escaping @Sendable (Int) -> Void = { _ in },
        completion: @escaping @Sendable (Result<LoadResponse, any Error>) -> Void
    ) -> any LoadHandle {
        let load = RetryingLoad(
            transport: self, request: request, configuration: request.applied(to: configuration), exact: exact,
            attempted: attempted, completion: completion)
        load.attempt(1)
        return load
    }

    /// Loads exactly the bytes `request` asks for, retried per `configuration.retry` (see
    /// ``startLoad(_:configuration:exact:attempted:completion:)``); a cancelled task cancels it.
    public func load(
        _ request: ByteRangeRequest, configuration: LoadingConfiguration,
        attempted: @escaping @Sendable (Int) -> Void = { _ in }
    ) async throws -> LoadResponse {
        try await awaitingCompletion { completion in
            startLoad(request, configuration: configuration, attempted: attempted, completion: completion)
        }
    }
}

/// Awaits a load started with a completion callback; a cancelled task cancels the load.
func awaitingCompletion(
    _ start: (@escaping @Sendable (Result<LoadResponse, any Error>) -> Void) -> (any LoadHandle)?
) async throws -> LoadResponse {
    let handle = Mutex<(any LoadHandle)?>(nil)
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            let started = start { continuation.resume(with: $0) }
            handle.withLock { $0 = started }
            // A cancellation that came before the load existed found nothing to cancel.
            if Task.isCancelled { started?.cancel() }
        }
    } onCancel: {
        handle.withLock { $0 }?.cancel()
    }
}

/// One request and its retries: the attempt under way or the timer before the next, and a single completion.
private final class RetryingLoad: LoadHandle, Sendable {
    private struct State {
        var current: (any LoadHandle)?
        /// Between attempts (the next one is on a timer, which does nothing once this is finished).
        var waiting = false
        var finished = false
        var cancelled = false
    }

    private let transport: any DataLoading
    private let request: ByteRangeRequest
    private let configuration: LoadingConfiguration
    private let exact: Bool
    private var url: URL { request.url }
    private let attempted: @Sendable (Int) -> Void
    private let completion: @Sendable (Result<LoadResponse, any Error>) -> Void
    private let state = Mutex(State())

    init(
        transport: any DataLoading, request: ByteRangeRequest, configuration: LoadingConfiguration, exact: Bool,
        attempted: @escaping @Sendable (Int) -> Void,
        completion: @escaping @Sendable (Result<LoadResponse, any Error>) -> Void
    ) {
        self.transport = transport
        self.request = request
        self.configuration = configuration
        self.exact = exact
        self.attempted = attempted
        self.completion = completion
    }

    func attempt(_ number: Int) {
        let go = state.withLock { state -> Bool? in
            guard !state.finished else { return nil }
            state.waiting = false
            return !state.cancelled
        }
        guard let go else { return }
        guard go else { return finish(.failure(cancellation())) }
        attempted(number)
        let handle = transport.startLoad(url, configuration: configuration) { [self] sent in
            let result = exact ? sent.flatMap(cut) : sent
            if case .failure(let error as LoadingError) = result, error.isTransient,
                number < configuration.retry.maximumAttempts
            {
                retry(after: number)
            } else {
                finish(result)
            }
        }
        let cancelled = state.withLock { state -> Bool in
            state.current = handle
            return state.cancelled
        }
        if cancelled { handle?.cancel() }
    }

    private func retry(after number: Int) {
        let scheduled = state.withLock { state -> Bool in
            guard !state.cancelled, !state.finished else { return false }
            state.current = nil
            state.waiting = true
            return true
        }
        guard scheduled else { return finish(.failure(cancellation())) }
        let delay = configuration.retry.delay(afterAttempt: number)
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [self] in attempt(number + 1) }
    }

    /// The response with exactly the requested bytes as its body.
    private func cut(_ response: LoadResponse) -> Result<LoadResponse, any Error> {
        Result { () throws(LoadingError) -> LoadResponse in
            var exact = response
            exact.data = try request.body(of: response)
            return exact
        }.mapError { $0 }
    }

    private func finish(_ result: Result<LoadResponse, any Error>) {
        let first = state.withLock { state -> Bool in
            defer { state.finished = true }
            state.current = nil
            state.waiting = false
            return !state.finished
        }
        if first { completion(result) }
    }

    private func cancellation() -> LoadingError { LoadingError(.cancelled, url: url, "cancelled") }

    func cancel() {
        let (current, waiting) = state.withLock { state in
            state.cancelled = true
            return (state.current, state.waiting)
        }
        current?.cancel()
        // Between attempts nothing else will complete (the timer's attempt sees the cancellation).
        if waiting { finish(.failure(cancellation())) }
    }
}
