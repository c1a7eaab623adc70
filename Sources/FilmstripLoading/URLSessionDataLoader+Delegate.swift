import FilmstripSync
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Per-task state lives in a `Mutex`; URLSession calls the delegate on its own serial queue, and `load` registers
/// tasks from any thread.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    struct Transfer {
        var url: URL
        var limit: Int
        /// The request's limits and policy, for its redirects.
        var configuration: LoadingConfiguration
        /// Seconds the delegate may take to answer a redirect (URLSession gives up on an answer after its own
        /// request timeout, and an answer that comes after that traps FoundationNetworking).
        var answerWithin: Double
        /// Every URL this transfer has been at, for loops.
        var visited: Set<String>
        /// A redirect's answer is being worked out; URLSession must not be cancelled meanwhile (FoundationNetworking
        /// traps on an answer to a task cancelled while it waited), so a cancel waits for the answer.
        var answeringRedirect = false
        var completion: @Sendable (Result<LoadResponse, any Error>) -> Void
        var data = Data()
        var response: HTTPURLResponse?
        var failure: LoadingError?
        /// When the last response or body bytes arrived (or the request started).
        var lastActivity = DispatchTime.now()
    }

    private let transfers = Mutex<[Int: Transfer]>([:])

    func register(
        _ task: URLSessionTask, url: URL, configuration: LoadingConfiguration,
        completion: @escaping @Sendable (Result<LoadResponse, any Error>) -> Void
    ) {
        let transfer = Transfer(
            url: url, limit: configuration.maximumResponseSize, configuration: configuration,
            answerWithin: max(0.5, min(5, configuration.requestTimeout / 2)), visited: [url.absoluteString],
            completion: completion)
        transfers.withLock { $0[task.taskIdentifier] = transfer }
    }

    /// Cancels `task`, failing it with `failure` (or as cancelled) unless it has already failed; while a redirect's
    /// answer is pending, the answer declines the redirect instead.
    ///
    /// FoundationNetworking traps when a redirect is answered after its task was cancelled, so cancelling and
    /// answering are serialised by the transfers' lock: a task is cancelled only while no answer is pending, and an
    /// answer is given only to a task still running.
    func cancel(_ task: URLSessionTask, because failure: LoadingError?) {
        transfers.withLock { transfers in
            if var transfer = transfers[task.taskIdentifier] {
                if transfer.failure == nil {
                    transfer.failure =
                        failure ?? LoadingError(.cancelled, url: transfer.url, "the request was cancelled")
                }
                transfers[task.taskIdentifier] = transfer
                if transfer.answeringRedirect { return }
            }
            // FoundationNetworking keeps a cancelled task reading its body until the body ends (a body that never
            // ends was read at a gigabyte every few seconds, into memory); suspending first stops the reading at
            // once, and the cancel then completes the task.
            task.suspend()
            task.cancel()
        }
    }

    /// Answers a redirect (`nil` declines it, and the transfer's failure says why), unless the task was cancelled
    /// before the question reached the delegate.
    private func answer(
        _ task: URLSessionTask, _ request: URLRequest?, reason: String? = nil,
        _ completionHandler: @Sendable (URLRequest?) -> Void
    ) {
        transfers.withLock { transfers in
            let id = task.taskIdentifier
            if var transfer = transfers[id] {
                transfer.answeringRedirect = false
                if transfer.failure == nil, let reason {
                    transfer.failure = LoadingError(
                        .refused, url: transfer.url, "a redirect refused by the address policy: \(reason)")
                }
                transfers[id] = transfer
                // A cancel that came while the answer was worked out left its reason as the failure.
                guard task.state == .running else { return }
                completionHandler(transfer.failure == nil ? request : nil)
            } else if task.state == .running {
                completionHandler(request)
            }
        }
    }

    /// Follows a redirect only to http or https, within the bound, never back to a URL already visited, and (under
    /// a policy) only to a host whose addresses it allows. A declined redirect completes the task with the
    /// redirect's own (already received) response, and the transfer fails with the reason.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        let id = task.taskIdentifier
        // Linux resolves a Location such as `file:///etc/passwd` against the current host; judge what the server
        // asked for, not what it became.
        let location = response.value(forHTTPHeaderField: "Location").flatMap {
            URL(string: $0, relativeTo: response.url)
        }
        let target = request.url
        let verdict = transfers.withLock {
            transfers -> (refusal: LoadingError?, configuration: LoadingConfiguration, within: Double)? in
            guard var transfer = transfers[id] else { return nil }
            let url = transfer.url
            if transfer.failure != nil { return (transfer.failure, transfer.configuration, 0) }
            let scheme = (location?.scheme ?? target?.scheme)?.lowercased()
            if target == nil || !(scheme == "http" || scheme == "https") {
                let destination = location?.absoluteString ?? target?.absoluteString ?? "nowhere"
                transfer.failure = LoadingError(
                    .refused, url: url, "a redirect to \(destination) is refused (http and https only)")
            } else if transfer.visited.count > transfer.configuration.maximumRedirects {
                transfer.failure = LoadingError(
                    .refused, url: url, "more than \(transfer.configuration.maximumRedirects) redirects")
            } else if let target, !transfer.visited.insert(target.absoluteString).inserted {
                transfer.failure = LoadingError(.refused, url: url, "a redirect loop through \(target.absoluteString)")
            }
            transfer.answeringRedirect = true
            transfer.lastActivity = .now()
            transfers[id] = transfer
            return (transfer.failure, transfer.configuration, transfer.answerWithin)
        }
        guard let verdict, verdict.refusal == nil, verdict.configuration.addressPolicy != .any, let target else {
            return answer(task, request, completionHandler)
        }
        // Resolution blocks: on a thread of its own, answered once, by the resolver or by the answer deadline.
        let answered = Mutex(false)
        let once: @Sendable (String?) -> Void = { [self] reason in
            let first = answered.withLock { done in
                defer { done = true }
                return !done
            }
            if first { answer(task, request, reason: reason, completionHandler) }
        }
        Thread.detachNewThread { once(verdict.configuration.policyRefusal(host: target.host ?? "")) }
        DispatchQueue.global().asyncAfter(deadline: .now() + verdict.within) {
            once("resolving \(target.host ?? "") took longer than \(verdict.within) s")
        }
    }

    func armDeadline(_ task: URLSessionTask, seconds: Double) {
        guard seconds > 0, seconds.isFinite else { return }
        let id = task.taskIdentifier
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [weak self, weak task] in
            guard let self, let task else { return }
            guard let url = self.transfers.withLock({ $0[id]?.url }) else { return }
            self.cancel(
                task, because: LoadingError(.timedOut, url: url, "the transfer did not finish within \(seconds) s"))
        }
    }

    /// Fails the transfer when no response or body bytes arrive for `seconds`; re-checks after each quiet spell.
    func armIdleTimeout(_ task: URLSessionTask, seconds: Double) {
        guard seconds > 0, seconds.isFinite else { return }
        scheduleIdleCheck(task.taskIdentifier, after: seconds, limit: seconds, task: task)
    }

    private func scheduleIdleCheck(_ id: Int, after delay: Double, limit: Double, task: URLSessionTask) {
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self, weak task] in
            guard let self, let task else { return }
            let (expired, remaining) = self.transfers.withLock { transfers -> (LoadingError?, Double?) in
                guard let transfer = transfers[id], transfer.failure == nil else { return (nil, nil) }
                let quiet = Double(DispatchTime.now().uptimeNanoseconds - transfer.lastActivity.uptimeNanoseconds) / 1e9
                if quiet >= limit - 0.001 {
                    return (
                        LoadingError(
                            .timedOut, url: transfer.url, "no data arrived within the request timeout (\(limit) s)"),
                        nil
                    )
                }
                return (nil, limit - quiet)
            }
            if let expired {
                self.cancel(task, because: expired)
            } else if let remaining {
                self.scheduleIdleCheck(id, after: remaining, limit: limit, task: task)
            }
        }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let http = response as? HTTPURLResponse
        let verdict = transfers.withLock { transfers -> LoadingError? in
            guard var transfer = transfers[dataTask.taskIdentifier] else { return nil }
            transfer.response = http
            transfer.lastActivity = .now()
            let expected = response.expectedContentLength
            if expected > 0 {
                transfer.data.reserveCapacity(Int(min(expected, Int64(transfer.limit))))
            }
            transfers[dataTask.taskIdentifier] = transfer
            if let status = http?.statusCode, !(200...299).contains(status) { return nil }
            if expected > Int64(transfer.limit) {
                return LoadingError(
                    .tooLarge(limit: transfer.limit), url: transfer.url,
                    "the server announced \(expected) bytes; the limit is \(transfer.limit)")
            }
            return nil
        }
        if let verdict {
            transfers.withLock { $0[dataTask.taskIdentifier]?.failure = verdict }
            completionHandler(.cancel)
        } else {
            completionHandler(.allow)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let id = dataTask.taskIdentifier
        let overflow = transfers.withLock { transfers -> LoadingError? in
            // Changed in place: a copy of the transfer would copy its body on every append (quadratic time, and a
            // delegate slower than the network lets FoundationNetworking queue what arrives, without bound).
            guard transfers[id] != nil else { return nil }
            transfers[id]!.lastActivity = .now()
            let status = transfers[id]!.response?.statusCode ?? 200
            // Error bodies are not kept beyond a small prefix; success bodies up to the limit.
            let limit = (200...299).contains(status) ? transfers[id]!.limit : 4096
            if transfers[id]!.data.count + data.count > limit {
                if (200...299).contains(status) {
                    return LoadingError(
                        .tooLarge(limit: limit), url: transfers[id]!.url,
                        "the body is larger than the limit of \(limit) bytes")
                }
                return nil
            }
            transfers[id]!.data.append(data)
            return nil
        }
        if let overflow { cancel(dataTask, because: overflow) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let transfer = transfers.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        transfer.completion(Self.outcome(transfer, error: error))
    }

    private static func outcome(_ transfer: Transfer, error: (any Error)?) -> Result<LoadResponse, any Error> {
        let url = transfer.url
        if let failure = transfer.failure { return .failure(failure) }
        if let error {
            let code = (error as? URLError)?.code
            switch code {
            case .timedOut?:
                return .failure(
                    LoadingError(.timedOut, url: url, "no data arrived within the request timeout", underlying: error))
            case .cancelled?:
                return .failure(LoadingError(.cancelled, url: url, "the request was cancelled", underlying: error))
            default:
                if transfer.response != nil, let expected = transfer.response?.expectedContentLength, expected > 0,
                    Int64(transfer.data.count) < expected
                {
                    return .failure(
                        LoadingError(
                            .truncated(expected: Int(expected), received: transfer.data.count), url: url,
                            "the connection closed after \(transfer.data.count) of \(expected) bytes", underlying: error
                        ))
                }
                return .failure(
                    LoadingError(
                        .transport, url: url, "the connection failed: \(error.localizedDescription)", underlying: error)
                )
            }
        }
        guard let response = transfer.response else {
            return .failure(LoadingError(.transport, url: url, "the server sent no HTTP response"))
        }
        guard (200...299).contains(response.statusCode) else {
            return .failure(
                LoadingError(
                    .httpStatus(response.statusCode), url: url,
                    "HTTP \(response.statusCode) \(HTTPURLResponse.localizedString(forStatusCode: response.statusCode))"
                ))
        }
        let expected = response.expectedContentLength
        if expected >= 0, Int64(transfer.data.count) != expected {
            return .failure(
                LoadingError(
                    .truncated(expected: Int(expected), received: transfer.data.count), url: url,
                    "the body ended after \(transfer.data.count) of \(expected) bytes"))
        }
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        return .success(LoadResponse(data: transfer.data, statusCode: response.statusCode, headers: headers))
    }
}
