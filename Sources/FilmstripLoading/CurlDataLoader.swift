#if canImport(CCurl)
    import CCurl
    import FilmstripSync
    public import Foundation

    /// The HTTP transport on Linux: libcurl (which FoundationNetworking is itself built on) driven directly, one
    /// multi handle on a thread of its own, with keep-alive connections shared by every request.
    ///
    /// Why not `URLSession` there: FoundationNetworking hands each piece of a body to its delegate through a queue
    /// with no bound, and goes on reading a cancelled task's body until the body ends. Against a server whose body
    /// never ends, one request grew a process past 15 GB. Here every byte goes through a callback on the transfer's
    /// own thread: past the size limit the callback refuses it and the transfer stops there, so what a request holds
    /// is bounded by ``LoadingConfiguration/maximumResponseSize`` whatever the server sends.
    ///
    /// Redirects are followed here, not by libcurl: each hop is judged before it is taken (http and https only, at
    /// most ``LoadingConfiguration/maximumRedirects``, no loop, and the address policy for the new host).
    /// Completions run on a global dispatch queue, never on the transfers' thread or on Swift's cooperative pool.
    public final class CurlDataLoader: DataLoading {
        private let engine: CurlEngine

        /// Creates a transport with its own connections: at most `maximumConnectionsPerHost` at once to one host.
        public init(maximumConnectionsPerHost: Int = 6) {
            engine = CurlEngine(maximumConnectionsPerHost: maximumConnectionsPerHost)
        }

        public func load(_ url: URL, configuration: LoadingConfiguration) async throws -> LoadResponse {
            try await awaitingCompletion { startLoad(url, configuration: configuration, completion: $0) }
        }

        @discardableResult
        public func startLoad(
            _ url: URL, configuration: LoadingConfiguration,
            completion: @escaping @Sendable (Result<LoadResponse, any Error>) -> Void
        ) -> (any LoadHandle)? {
            if let refusal = configuration.refusal(of: url) {
                completion(.failure(refusal))
                return nil
            }
            let request = CurlRequest(engine: engine, url: url, configuration: configuration, completion: completion)
            request.go(to: url)
            return request
        }
    }

    /// One request: its hops (the URL, then each redirect's target) and its single completion.
    private final class CurlRequest: LoadHandle, Sendable {
        private struct State {
            var transfer: CurlTransfer?
            var visited: Set<String>
            var cancelled = false
            var finished = false
        }

        let engine: CurlEngine
        let url: URL
        let configuration: LoadingConfiguration
        private let completion: @Sendable (Result<LoadResponse, any Error>) -> Void
        private let state: Mutex<State>
        private let started = DispatchTime.now()

        init(
            engine: CurlEngine, url: URL, configuration: LoadingConfiguration,
            completion: @escaping @Sendable (Result<LoadResponse, any Error>) -> Void
        ) {
            self.engine = engine
            self.url = url
            self.configuration = configuration
            self.completion = completion
            state = Mutex(State(visited: [url.absoluteString]))
        }

        /// Starts the hop to `target`, after the address policy has judged its host (resolving blocks: on a thread
        /// of its own).
        func go(to target: URL) {
            guard configuration.addressPolicy != .any else { return start(target) }
            Thread.detachNewThread { [self] in
                if let reason = configuration.policyRefusal(host: target.host ?? "") {
                    let what =
                        target == url ? "refused by the address policy" : "a redirect refused by the address policy"
                    finish(.failure(LoadingError(.refused, url: url, "\(what): \(reason)")))
                } else {
                    start(target)
                }
            }
        }

        private func start(_ target: URL) {
            // The whole request keeps one deadline, across its redirects.
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
            let transfer = CurlTransfer(
                url: target, configuration: configuration, deadline: configuration.resourceTimeout - elapsed
            ) { [self] outcome in hopEnded(outcome) }
            let go = state.withLock { state -> Bool in
                guard !state.cancelled, !state.finished else { return false }
                state.transfer = transfer
                return true
            }
            guard go else { return finish(.failure(LoadingError(.cancelled, url: url, "the request was cancelled"))) }
            engine.add(transfer)
        }

        /// A hop ended: a redirect to judge and follow, or the request's outcome.
        private func hopEnded(_ outcome: CurlTransfer.Outcome) {
            switch outcome {
            case .done(let result):
                finish(result.mapError { $0.retargeted(to: url) })
            case .redirect(let location, let from):
                // Judged as the server wrote it (a `file:` target is refused, not resolved against this host).
                guard let target = URL(string: location, relativeTo: from)?.absoluteURL,
                    let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https"
                else {
                    return finish(
                        .failure(
                            LoadingError(
                                .refused, url: url, "a redirect to \(location) is refused (http and https only)")))
                }
                let verdict = state.withLock { state -> LoadingError? in
                    if state.visited.count > configuration.maximumRedirects {
                        return LoadingError(.refused, url: url, "more than \(configuration.maximumRedirects) redirects")
                    }
                    if !state.visited.insert(target.absoluteString).inserted {
                        return LoadingError(.refused, url: url, "a redirect loop through \(target.absoluteString)")
                    }
                    return nil
                }
                if let verdict { return finish(.failure(verdict)) }
                go(to: target)
            }
        }

        private func finish(_ result: Result<LoadResponse, LoadingError>) {
            let first = state.withLock { state -> Bool in
                defer {
                    state.finished = true
                    // The transfer's end handler holds this request: letting the transfer go breaks the cycle, or
                    // every request (and what its completion holds) would stay in memory for good.
                    state.transfer = nil
                }
                return !state.finished
            }
            guard first else { return }
            let completion = self.completion
            DispatchQueue.global().async { completion(result.mapError { $0 as any Error }) }
        }

        func cancel() {
            let transfer = state.withLock { state -> CurlTransfer? in
                state.cancelled = true
                return state.transfer
            }
            if let transfer {
                engine.cancel(transfer)
            } else {
                finish(.failure(LoadingError(.cancelled, url: url, "the request was cancelled")))
            }
        }
    }

    extension LoadingError {
        /// The same error about the request's own URL (a hop's error names the URL the caller asked for).
        fileprivate func retargeted(to url: URL) -> LoadingError {
            var error = self
            error.url = url
            return error
        }
    }
#endif
