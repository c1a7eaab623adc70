#if canImport(CCurl)
    import CCurl
    import FilmstripSync
    import Foundation

    /// One HTTP exchange on a ``CurlEngine``: its easy handle, what has arrived, and why it must stop.
    ///
    /// `@unchecked Sendable`: everything but `stop` is touched on the engine's thread only (``begin()``, the libcurl
    /// callbacks, ``check(_:)``, ``end(_:)``); `stop` is behind its own lock, set from any thread by ``fail(_:)``.
    final class CurlTransfer: @unchecked Sendable {
        /// How a hop ended: a redirect to follow (its `Location` and the URL it came from), or the outcome.
        enum Outcome: Sendable {
            case redirect(String, from: URL)
            case done(Result<LoadResponse, LoadingError>)
        }

        let url: URL
        private let configuration: LoadingConfiguration
        private let deadline: DispatchTime
        private let ended: @Sendable (Outcome) -> Void
        private var easy: UnsafeMutableRawPointer?
        private var headerList: UnsafeMutablePointer<curl_slist>?
        private var body = Data()
        private var status = 0
        private var headers: [String: String] = [:]
        private var lastActivity = DispatchTime.now()
        private var discarded = 0
        /// The body of a response that is not a success was long, and is not read to its end.
        private var abandonedBody = false
        private let stop = Mutex<LoadingError?>(nil)
        private var done = false

        init(
            url: URL, configuration: LoadingConfiguration, deadline seconds: Double,
            ended: @escaping @Sendable (Outcome) -> Void
        ) {
            self.url = url
            self.configuration = configuration
            let nanoseconds = seconds.isFinite ? UInt64(max(0, min(seconds, 1e7)) * 1e9) : UInt64(1e16)
            deadline = DispatchTime.now() + .nanoseconds(Int(min(nanoseconds, UInt64(Int.max))))
            self.ended = ended
        }

        /// Stops the transfer with `error` (its outcome, unless it has one already); it ends at the engine's next turn.
        func fail(_ error: LoadingError) {
            stop.withLock { if $0 == nil { $0 = error } }
        }

        /// Sets up the easy handle; `nil` (and the transfer ended) when it was stopped before it began.
        func begin() -> UnsafeMutableRawPointer? {
            if let error = stop.withLock({ $0 }) {
                finish(.done(.failure(error)))
                return nil
            }
            guard let handle = curl_easy_init() else {
                finish(.done(.failure(LoadingError(.transport, url: url, "libcurl could not start a transfer"))))
                return nil
            }
            easy = handle
            let context = Unmanaged.passUnretained(self).toOpaque()
            filmstrip_curl_set_string(handle, CURLOPT_URL, url.absoluteString)
            filmstrip_curl_set_long(handle, CURLOPT_NOSIGNAL, 1)
            filmstrip_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
            filmstrip_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0)
            filmstrip_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(configuration.requestTimeout))
            filmstrip_curl_set_string(handle, CURLOPT_USERAGENT, "Filmstrip")
            for (name, value) in configuration.additionalHeaders {
                headerList = curl_slist_append(headerList, "\(name): \(value)")
            }
            if let headerList { filmstrip_curl_set_list(handle, CURLOPT_HTTPHEADER, headerList) }
            filmstrip_curl_set_callback(handle, CURLOPT_HEADERFUNCTION) { data, size, count, context in
                guard let data, let context else { return 0 }
                let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
                return transfer.header(UnsafeRawBufferPointer(start: data, count: size * count)) ? size * count : 0
            }
            filmstrip_curl_set_pointer(handle, CURLOPT_HEADERDATA, context)
            filmstrip_curl_set_callback(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
                guard let data, let context else { return 0 }
                let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
                return transfer.receive(UnsafeRawBufferPointer(start: data, count: size * count)) ? size * count : 0
            }
            filmstrip_curl_set_pointer(handle, CURLOPT_WRITEDATA, context)
            lastActivity = .now()
            return handle
        }

        static func milliseconds(_ seconds: Double) -> Int {
            seconds.isFinite ? Int(max(1, min(seconds * 1000, 1e9)).rounded(.up)) : 0
        }

        /// A header line; a status line starts a new response's headers (after a 100 Continue, say).
        private func header(_ line: UnsafeRawBufferPointer) -> Bool {
            lastActivity = .now()
            let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if text.hasPrefix("HTTP/") {
                headers = [:]
                let parts = text.split(separator: " ", maxSplits: 2)
                status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            } else if let colon = text.firstIndex(of: ":") {
                let name = text[..<colon].lowercased()
                let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                headers[name] = headers[name].map { $0 + ", " + value } ?? value
            } else if text.isEmpty, (200...299).contains(status),
                let length = headers["content-length"].flatMap(Int.init),
                length > configuration.maximumResponseSize
            {
                fail(
                    LoadingError(
                        .tooLarge(limit: configuration.maximumResponseSize), url: url,
                        "the server announced \(length) bytes; the limit is \(configuration.maximumResponseSize)"))
                return false
            }
            return stop.withLock { $0 } == nil
        }

        /// Body bytes: kept up to the limit (a success's) or a small prefix (anything else's, which is not used).
        private func receive(_ bytes: UnsafeRawBufferPointer) -> Bool {
            lastActivity = .now()
            if stop.withLock({ $0 }) != nil { return false }
            guard (200...299).contains(status) else {
                discarded += bytes.count
                // A redirect's or an error's body is not used: a long one is not read to its end either.
                abandonedBody = discarded > 64 << 10
                return !abandonedBody
            }
            guard body.count + bytes.count <= configuration.maximumResponseSize else {
                fail(
                    LoadingError(
                        .tooLarge(limit: configuration.maximumResponseSize), url: url,
                        "the body is larger than the limit of \(configuration.maximumResponseSize) bytes"))
                return false
            }
            bytes.withMemoryRebound(to: UInt8.self) { body.append($0) }
            return true
        }

        /// Seconds until the transfer's next timeout, or `nil` when it must end now (stopped, idle or past its
        /// deadline).
        func check(_ now: DispatchTime) -> Double? {
            if stop.withLock({ $0 }) != nil { return nil }
            let idle = Double(now.uptimeNanoseconds - min(now.uptimeNanoseconds, lastActivity.uptimeNanoseconds)) / 1e9
            let timeout = configuration.requestTimeout
            if timeout.isFinite, timeout > 0, idle >= timeout - 0.0005 {
                fail(LoadingError(.timedOut, url: url, "no data arrived within the request timeout (\(timeout) s)"))
                return nil
            }
            if now >= deadline {
                fail(
                    LoadingError(
                        .timedOut, url: url, "the transfer did not finish within \(configuration.resourceTimeout) s"))
                return nil
            }
            let toDeadline = Double(deadline.uptimeNanoseconds - now.uptimeNanoseconds) / 1e9
            return min(timeout.isFinite && timeout > 0 ? timeout - idle : 1, toDeadline)
        }

        /// The transfer ended: with libcurl's `result`, or (`nil`) stopped by the engine.
        func end(_ result: CURLcode?) {
            guard let easy else { return }
            if let error = stop.withLock({ $0 }) {
                finish(.done(.failure(error)))
            } else if let result {
                finish(outcome(result, easy))
            } else {
                finish(.done(.failure(LoadingError(.transport, url: url, "the transfer stopped"))))
            }
        }

        private func outcome(_ result: CURLcode, _ easy: UnsafeMutableRawPointer) -> Outcome {
            var expected: curl_off_t = -1
            filmstrip_curl_info_offset(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &expected)
            switch result {
            case CURLE_OK:
                break
            case CURLE_WRITE_ERROR where abandonedBody:
                break
            case CURLE_PARTIAL_FILE:
                return .done(
                    .failure(
                        LoadingError(
                            .truncated(expected: Int(expected), received: body.count), url: url,
                            "the connection closed after \(body.count) of \(expected) bytes")))
            case CURLE_OPERATION_TIMEDOUT:
                return .done(.failure(LoadingError(.timedOut, url: url, "no data arrived within the request timeout")))
            case CURLE_GOT_NOTHING:
                return .done(.failure(LoadingError(.transport, url: url, "the server sent no HTTP response")))
            default:
                if (200...299).contains(status), expected > 0, body.count < expected {
                    return .done(
                        .failure(
                            LoadingError(
                                .truncated(expected: Int(expected), received: body.count), url: url,
                                "the connection closed after \(body.count) of \(expected) bytes")))
                }
                let reason = String(cString: curl_easy_strerror(result))
                return .done(.failure(LoadingError(.transport, url: url, "the connection failed: \(reason)")))
            }
            if (300...399).contains(status), status != 304, let location = headers["location"] {
                return .redirect(location, from: url)
            }
            guard (200...299).contains(status) else {
                let phrase = Self.phrases[status].map { " " + $0 } ?? ""
                return .done(.failure(LoadingError(.httpStatus(status), url: url, "HTTP \(status)\(phrase)")))
            }
            return .done(.success(LoadResponse(data: body, statusCode: status, headers: headers)))
        }

        /// Reason phrases of the statuses a media server answers with.
        static let phrases: [Int: String] = [
            304: "Not Modified", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
            405: "Method Not Allowed", 408: "Request Timeout", 410: "Gone", 416: "Range Not Satisfiable",
            429: "Too Many Requests", 500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable",
            504: "Gateway Timeout",
        ]

        private func finish(_ outcome: Outcome) {
            guard !done else { return }
            done = true
            if let easy { curl_easy_cleanup(easy) }
            easy = nil
            if let headerList { curl_slist_free_all(headerList) }
            headerList = nil
            body = Data()
            ended(outcome)
        }
    }
#endif
