public import Foundation
public import Logging
import Synchronization

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
    private let logger: Logger
    private let coalescer = RequestCoalescer<String, Data>()
    private let counters = Mutex((requests: 0, bytes: 0))

    /// Creates a loader.
    public init(
        configuration: LoadingConfiguration = LoadingConfiguration(), transport: (any DataLoading)? = nil,
        diskCache: DiskCache? = nil, logger: Logger? = nil
    ) {
        self.configuration = configuration
        self.transport = transport ?? URLSessionDataLoader()
        self.diskCache = diskCache
        self.logger = logger ?? Logger(label: "filmstrip.loading", factory: { _ in SwiftLogNoOpLogHandler() })
    }

    /// Network requests made (each retry counts) and body bytes received.
    public var networkStatistics: (requests: Int, bytes: Int) { counters.withLock { $0 } }

    /// Loads the bytes of `url`.
    ///
    /// - Parameters:
    ///   - policy: where the bytes may come from (ignored for `file:` URLs, which are always read from disk).
    ///   - validate: checks fetched bytes before they are stored or returned; a throw becomes an
    ///     ``LoadingError/Kind/invalidContent`` error and nothing is stored.
    public func data(
        for url: URL, policy: CachePolicy = .networkFirst, validate: (@Sendable (Data) throws -> Void)? = nil
    ) async throws -> Data {
        if url.isFileURL { return try readFile(url, validate: validate) }
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw LoadingError(.unsupportedURL, url: url, "unsupported URL scheme '\(url.scheme ?? "")'")
        }
        let key = policy.rawValue + " " + DiskCache.normalizedKey(for: url)
        return try await coalescer.value(for: key) { [self] in
            try await load(url, policy: policy, validate: validate)
        }
    }

    /// A local file holding the bytes of `url` without touching the network: the file itself for `file:` URLs,
    /// the cache entry for remote ones; `nil` when there is none.
    public func localFile(for url: URL) -> URL? {
        if url.isFileURL { return FileManager.default.isReadableFile(atPath: url.path) ? url : nil }
        return diskCache?.cachedFileURL(for: url)
    }

    // MARK: Internals

    private func load(
        _ url: URL, policy: CachePolicy, validate: (@Sendable (Data) throws -> Void)?
    ) async throws
        -> Data
    {
        switch policy {
        case .cacheOnly:
            guard let cached = try cachedData(url, validate: validate) else {
                throw LoadingError(.notCached, url: url, "offline: not in the disk cache")
            }
            return cached
        case .cacheFirst:
            if let cached = try cachedData(url, validate: validate) { return cached }
            return try await fetchAndStore(url, validate: validate)
        case .networkFirst:
            do {
                return try await fetchAndStore(url, validate: validate)
            } catch let error as LoadingError where error.allowsCacheFallback {
                if let cached = try cachedData(url, validate: validate) {
                    logger.warning(
                        "using the cached copy",
                        metadata: ["url": "\(url.absoluteString)", "reason": "\(error.message)"])
                    return cached
                }
                throw error
            }
        }
    }

    /// Cached bytes, or `nil`; an entry that fails validation is removed (it is never served).
    private func cachedData(_ url: URL, validate: (@Sendable (Data) throws -> Void)?) throws -> Data? {
        guard let cache = diskCache, let data = try cache.data(for: url) else { return nil }
        if let validate {
            do { try validate(data) } catch {
                logger.warning("removing an invalid cache entry", metadata: ["url": "\(url.absoluteString)"])
                cache.remove(url)
                return nil
            }
        }
        return data
    }

    private func fetchAndStore(_ url: URL, validate: (@Sendable (Data) throws -> Void)?) async throws -> Data {
        let data = try await fetchWithRetries(url)
        if let validate {
            do { try validate(data) } catch {
                throw LoadingError(.invalidContent, url: url, "the response is not usable: \(error)", underlying: error)
            }
        }
        try diskCache?.store(data, for: url)
        return data
    }

    private func fetchWithRetries(_ url: URL) async throws -> Data {
        var attempt = 1
        while true {
            try Task.checkCancellation()
            do {
                counters.withLock { $0.requests += 1 }
                let response = try await transport.load(url, configuration: configuration)
                counters.withLock { $0.bytes += response.data.count }
                return response.data
            } catch let error as LoadingError where error.isTransient && attempt < configuration.retry.maximumAttempts {
                let delay = configuration.retry.delay(afterAttempt: attempt)
                logger.debug(
                    "retrying",
                    metadata: ["url": "\(url.absoluteString)", "attempt": "\(attempt)", "error": "\(error.message)"])
                try await Task.sleep(nanoseconds: UInt64(delay * 1e9))
                attempt += 1
            }
        }
    }

    private func readFile(_ url: URL, validate: (@Sendable (Data) throws -> Void)?) throws -> Data {
        let path = url.path
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: path)
        } catch {
            throw LoadingError(.fileUnreadable, url: url, "no such file: \(path)", underlying: error)
        }
        if let size = (attributes[.size] as? NSNumber)?.intValue, size > configuration.maximumResponseSize {
            throw LoadingError(
                .tooLarge(limit: configuration.maximumResponseSize), url: url,
                "the file is \(size) bytes; the limit is \(configuration.maximumResponseSize)")
        }
        let data: Data
        do {
            data = try Data(contentsOf: url)
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
