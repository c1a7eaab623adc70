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
    /// `configuration.retry` says, on the package's ``RetryLoop`` (waiting on dispatch timers, so a caller that blocks
    /// its own thread on the completion never needs a free thread in Swift's cooperative pool). `completion` is
    /// called once, with the last attempt's result; `prepare` before each attempt may change what it sends. When
    /// `exact`, a response's body is exactly the bytes asked for (``ByteRangeRequest/body(of:)``; a short `206` is a
    /// truncated body, tried again); otherwise it is what the server sent. The returned handle cancels the attempt
    /// under way or the wait.
    @discardableResult
    public func startLoad(
        _ request: ByteRangeRequest, configuration: LoadingConfiguration, exact: Bool = true,
        prepare: @escaping @Sendable (inout RequestAttempt) -> Void = { _ in },
        completion: @escaping @Sendable (Result<LoadResponse, any Error>) -> Void
    ) -> any LoadHandle {
        let loop = RetryLoop<LoadResponse>(
            policy: configuration.retry,
            failed: { error in
                guard let error = error as? LoadingError, error.isTransient else { return nil }
                return error.kind == .transport ? .connectivity : .other
            },
            cancellation: { LoadingError(.cancelled, url: request.url, "cancelled") },
            start: { number, done in
                var sent = RequestAttempt(number: number, url: request.url, headers: configuration.additionalHeaders)
                prepare(&sent)
                var configured = configuration
                configured.additionalHeaders = sent.headers
                configured = ByteRangeRequest(url: sent.url, range: request.range).applied(to: configured)
                return startLoad(sent.url, configuration: configured) { result in
                    done(exact ? result.flatMap { response in Self.cut(response, to: request) } : result)
                }
            }, completion: completion)
        loop.begin()
        return loop
    }

    /// The response with exactly the bytes `request` asked for as its body.
    private static func cut(_ response: LoadResponse, to request: ByteRangeRequest) -> Result<LoadResponse, any Error> {
        Result { () throws(LoadingError) -> LoadResponse in
            var exact = response
            exact.data = try request.body(of: response)
            return exact
        }.mapError { $0 }
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

/// Awaits work started with a completion callback; a cancelled task cancels it.
func awaitingCompletion<Value: Sendable>(
    _ start: (@escaping @Sendable (Result<Value, any Error>) -> Void) -> (any LoadHandle)?
) async throws -> Value {
    let handle = Mutex<(any LoadHandle)?>(nil)
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            let started = start { continuation.resume(with: $0) }
            handle.withLock { $0 = started }
            // A cancellation that came before the work existed found nothing to cancel.
            if Task.isCancelled { started?.cancel() }
        }
    } onCancel: {
        handle.withLock { $0 }?.cancel()
    }
}
