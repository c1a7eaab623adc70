import FilmstripSync
public import Foundation
public import Logging

/// Loads bytes from `file:` and `http(s):` URLs through a disk cache, with retries for transient failures and
/// identical in-flight requests shared.
///
/// ```swift
/// let loader = ResourceLoader(diskCache: DiskCache(directory: cacheDirectory))
/// let track = try await loader.data(for: trackURL, policy: .networkFirst)   // falls back to the cache offline
/// let sheet = try await loader.data(for: sheetURL, policy: .cacheFirst)     // immutable by URL: cache wins
/// ```
public final class ResourceLoader: Sendable {
    /// Where bytes may come from.
    public enum CachePolicy: String, Sendable, Hashable {
        /// Ask the network; when it fails with a connection error, timeout or 5xx, use the cached copy if any.
        case networkFirst
        /// Use the cached copy if any; otherwise ask the network and store the result.
        case cacheFirst
        /// Use only the cache (offline mode); a missing entry is a ``LoadingError/Kind/notCached`` error.
        case cacheOnly
    }

    /// Limits, timeouts and retries.
    public let configuration: LoadingConfiguration
    /// The network transport.
    public let transport: any DataLoading
    /// The disk cache, if any.
    public let diskCache: DiskCache?
    /// Rewrites every network request (see ``RequestInterceptor``).
    public let interceptor: RequestInterceptor?
    private let logger: Logger
    private let coalescer = RequestCoalescer<String, Data>()
    private let counters = Mutex((requests: 0, bytes: 0))

    /// Creates a loader.
    public init(
        configuration: LoadingConfiguration = LoadingConfiguration(), transport: (any DataLoading)? = nil,
        diskCache: DiskCache? = nil, logger: Logger? = nil, interceptor: RequestInterceptor? = nil
    ) {
        self.interceptor = interceptor
        self.configuration = configuration
        self.transport = transport ?? DefaultTransport.shared
        self.diskCache = diskCache
        self.logger = logger ?? Logger(label: "filmstrip.loading", factory: { _ in SwiftLogNoOpLogHandler() })
    }

    /// Network requests made (each retry counts) and body bytes received.
    public var networkStatistics: (requests: Int, bytes: Int) { counters.withLock { $0 } }

    /// Loads the bytes of `url`, or of the byte `range` of it (one `Range` request; cached under the URL and the
    /// range).
    ///
    /// - Parameters:
    ///   - range: the part of the resource, `start..<end`; `nil` for all of it.
    ///   - policy: where the bytes may come from (ignored for `file:` URLs, which are always read from disk).
    ///   - validate: checks fetched bytes before they are stored or returned; a throw becomes an
    ///     ``LoadingError/Kind/invalidContent`` error and nothing is stored.
    public func data(
        for url: URL, range: Range<Int64>? = nil, policy: CachePolicy = .networkFirst,
        validate: (@Sendable (Data) throws -> Void)? = nil
    ) async throws -> Data {
        if url.isFileURL { return try readFile(url, range: range, validate: validate) }
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw LoadingError(.unsupportedURL, url: url, "unsupported URL scheme '\(url.scheme ?? "")'")
        }
        var key = policy.rawValue + " " + DiskCache.normalizedKey(for: url)
        if let range { key += " bytes=\(range.lowerBound)-\(range.upperBound)" }
        return try await coalescer.value(for: key) { [self] in
            try await load(Request(url: url, range: range), policy: policy, validate: validate)
        }
    }

    /// One resource, or a byte range of one.
    private struct Request {
        var url: URL
        var range: Range<Int64>?
    }

    /// What a conditional request found.
    public enum Revalidation: Sendable {
        /// The server answered 304: the copy the validators came from is current.
        case notModified
        /// New bytes, with the validators to send next time.
        case modified(Data, etag: String?, lastModified: String?)
    }

    /// Asks the server whether `url` changed since the version with these validators (`If-None-Match`,
    /// `If-Modified-Since`); new bytes are stored in the disk cache. Through the interceptor like every request.
    public func revalidate(_ url: URL, etag: String?, lastModified: String?) async throws -> Revalidation {
        var headers = configuration.additionalHeaders
        if let etag { headers["If-None-Match"] = etag }
        if let lastModified { headers["If-Modified-Since"] = lastModified }
        let original = InterceptedRequest(url: url, headers: headers)
        let sent = try await interceptor?(original, .initial) ?? original
        var configuration = self.configuration
        configuration.additionalHeaders = sent.headers
        do {
            counters.withLock { $0.requests += 1 }
            let response = try await transport.load(sent.url, configuration: configuration)
            counters.withLock { $0.bytes += response.data.count }
            try? diskCache?.store(response.data, for: url)
            return .modified(
                response.data, etag: response.headers["etag"], lastModified: response.headers["last-modified"])
        } catch let error as LoadingError where error.kind == .httpStatus(304) {
            return .notModified
        }
    }

    /// Whether the bytes of `url` (or its byte `range`) are at hand without the network: a readable file for
    /// `file:` URLs, a cache entry for remote ones (not checked until it is read).
    public func hasLocalCopy(of url: URL, range: Range<Int64>? = nil) -> Bool {
        if url.isFileURL { return FileManager.default.isReadableFile(atPath: url.path) }
        return diskCache?.contains(url, range: range) ?? false
    }

    /// The bytes of `url` (or its byte `range`) without touching the network: from the file for `file:` URLs,
    /// from a checked cache entry for remote ones; `nil` when there are none.
    public func localData(for url: URL, range: Range<Int64>? = nil) -> Data? {
        guard url.isFileURL else { return try? diskCache?.data(for: url, range: range) }
        // Only a regular file within the size limit: a device, a FIFO or an endless file (a track naming
        // /dev/urandom as its image) is not read at all, as the fetching path refuses it.
        guard let size = LocalFile.regularFileSize(url) else { return nil }
        let wanted = range ?? 0..<size
        guard wanted.count <= configuration.maximumResponseSize, wanted.upperBound <= size else { return nil }
        guard let handle = try? FileHandle(forReadingFrom: url) else { return nil }
        defer { try? handle.close() }
        guard (try? handle.seek(toOffset: UInt64(wanted.lowerBound))) != nil else { return nil }
        return try? handle.read(upToCount: Int(wanted.count)) ?? Data()
    }

    // MARK: Internals

    private func load(
        _ request: Request, policy: CachePolicy, validate: (@Sendable (Data) throws -> Void)?
    ) async throws
        -> Data
    {
        switch policy {
        case .cacheOnly:
            guard let cached = try cachedData(request, validate: validate) else {
                throw LoadingError(.notCached, url: request.url, "offline: not in the disk cache")
            }
            return cached
        case .cacheFirst:
            if let cached = try cachedData(request, validate: validate) { return cached }
            return try await fetchAndStore(request, validate: validate)
        case .networkFirst:
            do {
                return try await fetchAndStore(request, validate: validate)
            } catch let error as LoadingError where error.allowsCacheFallback {
                if let cached = try cachedData(request, validate: validate) {
                    logger.warning(
                        "using the cached copy",
                        metadata: ["url": "\(request.url.absoluteString)", "reason": "\(error.message)"])
                    return cached
                }
                throw error
            }
        }
    }

    /// Cached bytes, or `nil`; an entry that fails validation is removed (it is never served).
    private func cachedData(_ request: Request, validate: (@Sendable (Data) throws -> Void)?) throws -> Data? {
        guard let cache = diskCache, let data = try cache.data(for: request.url, range: request.range) else {
            return nil
        }
        if let validate {
            do { try validate(data) } catch {
                logger.warning("removing an invalid cache entry", metadata: ["url": "\(request.url.absoluteString)"])
                cache.remove(request.url, range: request.range)
                return nil
            }
        }
        return data
    }

    private func fetchAndStore(_ request: Request, validate: (@Sendable (Data) throws -> Void)?) async throws -> Data {
        let data = try await fetchWithRetries(request)
        if let validate {
            do { try validate(data) } catch {
                throw LoadingError(
                    .invalidContent, url: request.url, "the response is not usable: \(error)", underlying: error)
            }
        }
        try diskCache?.store(data, for: request.url, range: request.range)
        return data
    }

    private func fetchWithRetries(_ request: Request) async throws -> Data {
        let wanted = ByteRangeRequest(url: request.url, range: request.range)
        let original = InterceptedRequest(
            url: request.url, headers: wanted.applied(to: configuration).additionalHeaders)
        var sent = try await interceptor?(original, .initial) ?? original
        var refreshed = false
        while true {
            try Task.checkCancellation()
            var configuration = self.configuration
            configuration.additionalHeaders = sent.headers
            let url = sent.url
            do {
                let response = try await transport.load(
                    ByteRangeRequest(url: url, range: request.range), configuration: configuration
                ) { [self] attempt in
                    counters.withLock { $0.requests += 1 }
                    if attempt.number > 1 {
                        logger.debug(
                            "retrying", metadata: ["url": "\(url.absoluteString)", "attempt": "\(attempt.number)"])
                    }
                }
                counters.withLock { $0.bytes += response.data.count }
                return response.data
            } catch let error as LoadingError
                where !refreshed && interceptor != nil
                && (error.kind == .httpStatus(401) || error.kind == .httpStatus(403))
            {
                // Once: ask for fresh credentials and send again.
                guard case .httpStatus(let status) = error.kind, let interceptor else { throw error }
                refreshed = true
                sent = try await interceptor(original, .authenticationFailed(status: status))
            }
        }
    }

    private func readFile(
        _ url: URL, range: Range<Int64>?, validate: (@Sendable (Data) throws -> Void)?
    ) throws -> Data {
        let path = url.path
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: path)
        } catch {
            throw LoadingError(.fileUnreadable, url: url, "no such file: \(path)", underlying: error)
        }
        // Devices, FIFOs and sockets (/dev/zero, /dev/stdin, /proc files report no size) never end or block.
        guard attributes[.type] as? FileAttributeType == .typeRegular else {
            throw LoadingError(.fileUnreadable, url: url, "not a regular file: \(path)")
        }
        let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
        let wanted = range ?? 0..<Int64(size)
        if wanted.count > configuration.maximumResponseSize {
            throw LoadingError(
                .tooLarge(limit: configuration.maximumResponseSize), url: url,
                "the file is \(wanted.count) bytes; the limit is \(configuration.maximumResponseSize)")
        }
        guard wanted.upperBound <= Int64(size) else {
            throw LoadingError(
                .invalidContent, url: url,
                "the byte range \(wanted.lowerBound)..<\(wanted.upperBound) is past the end of the \(size)-byte file")
        }
        let data: Data
        do {
            if range == nil {
                data = try Data(contentsOf: url)
            } else {
                let handle = try FileHandle(forReadingFrom: url)
                defer { try? handle.close() }
                try handle.seek(toOffset: UInt64(wanted.lowerBound))
                data = try handle.read(upToCount: Int(wanted.count)) ?? Data()
            }
        } catch {
            throw LoadingError(.fileUnreadable, url: url, "cannot read \(path)", underlying: error)
        }
        if let validate {
            do { try validate(data) } catch {
                throw LoadingError(.invalidContent, url: url, "the file is not usable: \(error)", underlying: error)
            }
        }
        return data
    }
}
