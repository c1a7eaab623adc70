import FilmstripSync
public import Foundation

/// What one attempt of a request sends: its URL and headers (a request decorator may change both per attempt, to
/// refresh a signed URL or the CMCD values, say). The `Range` header is the request's own.
public struct RequestAttempt: Sendable {
    /// Which attempt, from 1.
    public let number: Int
    /// Where it goes.
    public var url: URL
    /// Its headers.
    public var headers: [String: String]
}

extension DataLoading {
    /// Starts `request`, trying it again after transient failures (``LoadingError/isTransient``) as
    /// `configuration.retry` says: the one retry loop that tracks, manifests, segments and progressive reads share.
    /// `completion` is called once, with the last attempt's result; `prepare` before each attempt may change what it
    /// sends. When `exact`, a response's body is exactly the bytes asked for (``ByteRangeRequest/body(of:)``; a
    /// short `206` is a truncated body, tried again); otherwise it is what the server sent.
    ///
    /// Waits between attempts run on a dispatch timer, so a caller that blocks its own thread on the completion
    /// (FFmpeg's I/O, a player's thread) never needs a free thread in Swift's cooperative pool. The returned handle
    /// cancels the attempt under way or the wait.
    @discardableResult
    public func startLoad(
        _ request: ByteRangeRequest, configuration: LoadingConfiguration, exact: Bool = true,
        prepare: @escaping @Sendable (inout RequestAttempt) -> Void = { _ in },
        completion: @escaping @Sendable (Result<LoadResponse, any Error>) -> Void
    ) -> any LoadHandle {
        let load = RetryingLoad(
            transport: self, request: request, configuration: configuration, exact: exact, prepare: prepare,
            completion: completion)
        load.attempt(1)
        return load
    }

    /// Loads exactly the bytes `request` asks for, retried per `configuration.retry` (see
    /// ``startLoad(_:configuration:exact:prepare:completion:)``); a cancelled task cancels it.
    public func load(
        _ request: ByteRangeRequest, configuration: LoadingConfiguration,
        prepare: @escaping @Sendable (inout RequestAttempt) -> Void = { _ in }
    ) async throws -> LoadResponse {
        try await awaitingCompletion { completion in
            startLoad(request, configuration: configuration, prepare: prepare, completion: completion)
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
        /// The attempt under way or next (its handle is kept only while it is the current one).
        var attempt = 0
        /// The policy applied to this request's failures.
        var schedule: RetrySchedule
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
    private let prepare: @Sendable (inout RequestAttempt) -> Void
    private let completion: @Sendable (Result<LoadResponse, any Error>) -> Void
    private let state: Mutex<State>

    init(
        transport: any DataLoading, request: ByteRangeRequest, configuration: LoadingConfiguration, exact: Bool,
        prepare: @escaping @Sendable (inout RequestAttempt) -> Void,
        completion: @escaping @Sendable (Result<LoadResponse, any Error>) -> Void
    ) {
        self.transport = transport
        self.request = request
        self.configuration = configuration
        self.exact = exact
        self.prepare = prepare
        self.completion = completion
        state = Mutex(State(schedule: RetrySchedule(configuration.retry)))
    }

    func attempt(_ number: Int) {
        let go = state.withLock { state -> Bool? in
            guard !state.finished else { return nil }
            state.waiting = false
            state.attempt = number
            return !state.cancelled
        }
        guard let go else { return }
        guard go else { return finish(.failure(cancellation())) }
        var sent = RequestAttempt(number: number, url: url, headers: configuration.additionalHeaders)
        prepare(&sent)
        var configured = configuration
        configured.additionalHeaders = sent.headers
        configured = ByteRangeRequest(url: sent.url, range: request.range).applied(to: configured)
        let handle = transport.startLoad(sent.url, configuration: configured) { [self] sent in
            let result = exact ? sent.flatMap(cut) : sent
            if case .failure(let error as LoadingError) = result, error.isTransient,
                case .retry(let delay) = state.withLock({
                    $0.schedule.failed(error.kind == .transport ? .connectivity : .other)
                })
            {
                retry(after: number, delay: delay)
            } else {
                finish(result)
            }
        }
        // Kept only while this attempt is the current one: its completion (and a retry after it) may already have come.
        let cancelled = state.withLock { state -> Bool in
            if state.attempt == number, !state.finished, !state.waiting { state.current = handle }
            return state.cancelled
        }
        if cancelled { handle?.cancel() }
    }

    private func retry(after number: Int, delay: Duration) {
        let scheduled = state.withLock { state -> Bool in
            guard !state.cancelled, !state.finished else { return false }
            state.current = nil
            state.waiting = true
            return true
        }
        guard scheduled else { return finish(.failure(cancellation())) }
        let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in attempt(number + 1) }
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
