import Foundation

/// Limits, timeouts and retries for loading.
public struct LoadingConfiguration: Sendable, Hashable {
    /// The largest body accepted, in bytes; a larger transfer is stopped as soon as it is known. Default 64 MiB.
    public var maximumResponseSize: Int
    /// Seconds without a byte arriving before the request fails. Default 15.
    public var requestTimeout: Double
    /// Seconds the whole transfer may take. Default 60.
    public var resourceTimeout: Double
    /// Retries for transient failures.
    public var retry: RetryPolicy
    /// Extra HTTP headers sent with every request. A name or value holding CR, LF or NUL is refused before
    /// anything is sent (``LoadingError/Kind/refused``).
    public var additionalHeaders: [String: String]
    /// Which addresses requests may reach, checked after DNS resolution before the request and before each
    /// redirect is followed. Default ``AddressPolicy/any``; servers that fetch what users give them set
    /// ``AddressPolicy/publicOnly``.
    public var addressPolicy: AddressPolicy
    /// The most redirects one request follows. Default 10. A redirect out of http and https, or back to a URL the
    /// request has already been at (a loop), is refused at once.
    public var maximumRedirects: Int
    /// Hosts the address policy lets through (tests reach their loopback server with it, and check the redirects).
    var policyExemptHosts: Set<String> = []

    /// Why `url` may not be requested at all (a scheme other than http and https, a header holding CR, LF or NUL),
    /// or `nil`: what every transport checks before anything is sent.
    func refusal(of url: URL) -> LoadingError? {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            return LoadingError(.unsupportedURL, url: url, "only http and https URLs can be fetched over the network")
        }
        for (name, value) in additionalHeaders
        where (name + value).utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) {
            return LoadingError(.refused, url: url, "the header '\(name.debugDescription)' holds CR, LF or NUL")
        }
        return nil
    }

    /// Why the policy refuses `host` (resolving it; blocking), or `nil`.
    func policyRefusal(host: String) -> String? {
        policyExemptHosts.contains(host) ? nil : addressPolicy.refusal(host: host)
    }

    /// Creates a configuration; every argument has the documented default.
    public init(
        maximumResponseSize: Int = 64 << 20, requestTimeout: Double = 15, resourceTimeout: Double = 60,
        retry: RetryPolicy = RetryPolicy(), additionalHeaders: [String: String] = [:],
        addressPolicy: AddressPolicy = .any, maximumRedirects: Int = 10
    ) {
        self.maximumResponseSize = maximumResponseSize
        self.requestTimeout = requestTimeout
        self.resourceTimeout = resourceTimeout
        self.retry = retry
        self.additionalHeaders = additionalHeaders
        self.addressPolicy = addressPolicy
        self.maximumRedirects = maximumRedirects
    }
}

/// How a failed request is tried again: the one retry policy of the package, a value handed to whatever runs the
/// request (the loaders' retry loop, or a player's own, on its clock). A ``RetrySchedule`` applies it to one request.
///
/// The loaders retry transient failures (HTTP 408, 429 and 5xx, connection resets, truncated bodies) with
/// exponential backoff. Timeouts are not retried there: a server that is too slow once is usually too slow again, and
/// the caller has already waited the full timeout.
public struct RetryPolicy: Sendable, Hashable {
    /// Total attempts including the first. Default 3.
    public var maximumAttempts: Int
    /// Delay before the first retry, in seconds. Default 0.2; it doubles per retry.
    public var baseDelay: Double
    /// The longest delay between attempts, in seconds (also caps `Retry-After`). Default 4.
    public var maximumDelay: Double
    /// The random spread of each delay, as a fraction (default 0.2: ±20 %); 0 gives the same delays every time.
    public var jitter: Double
    /// Whether a server that cannot be reached is waited for (tried again with growing pauses, at most two seconds
    /// apart, for up to ``connectivityBudget`` in all) instead of counting as a failed attempt. Default `false`.
    public var waitsForConnectivity: Bool
    /// The longest the waiting for connectivity may last in all, in seconds. Default 30.
    public var connectivityBudget: Double

    /// Creates a policy.
    public init(
        maximumAttempts: Int = 3, baseDelay: Double = 0.2, maximumDelay: Double = 4, jitter: Double = 0.2,
        waitsForConnectivity: Bool = false, connectivityBudget: Double = 30
    ) {
        self.maximumAttempts = max(1, maximumAttempts)
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
        self.jitter = min(max(0, jitter), 1)
        self.waitsForConnectivity = waitsForConnectivity
        self.connectivityBudget = max(0, connectivityBudget)
    }

    /// No retries.
    public static let none = RetryPolicy(maximumAttempts: 1)

    /// The delay before attempt `attempt + 1` (attempt counts from 1), honouring a server's `Retry-After` seconds.
    public func delay(afterAttempt attempt: Int, retryAfter: Double? = nil) -> Double {
        if let retryAfter { return min(maximumDelay, max(0, retryAfter)) }
        let exponential = baseDelay * Double(1 << min(max(attempt, 1) - 1, 16))
        let spread = jitter > 0 ? Double.random(in: (1 - jitter)...(1 + jitter)) : 1
        return min(maximumDelay, exponential * spread)
    }
}
