public import FilmstripLoading

#if canImport(FoundationNetworking)
    import Foundation
    public import FoundationNetworking
#else
    public import Foundation
#endif

/// Network settings (SPEC 4.5), SDK-wide or per player; where both are set, the player's value wins, field by field.
public struct NetworkConfiguration: Sendable, Hashable {
    /// Headers sent with every request (merged key by key; the player's value wins).
    public var httpAdditionalHeaders: [String: String]?
    /// Whether cellular networks may be used. Set on the player's URLSession; it has no effect on Linux, where
    /// URLSession does not tell network kinds apart.
    public var allowsCellularAccess: Bool?
    /// The longest a whole resource may take, in milliseconds.
    public var timeoutIntervalForResourceMs: Int?
    /// The longest a key request may take, in milliseconds: AES-128 segment keys on Filmstrip's engine (a license
    /// request on DRM-capable engines). Past it the request fails as timed out and is retried like a segment.
    public var timeoutIntervalForDrmAcquisitionMs: Int?
    /// Whether requests wait for connectivity instead of failing at once. On Filmstrip's engine (default `true`) a
    /// request to an unreachable server is retried, with pauses of up to 2 s, for up to the resource timeout; with
    /// `false` an unreachable server is an ordinary failed attempt (retried `segmentRetries` times). Either way the
    /// loss and the return of connectivity are reported as warnings. A file or progressive download (read by FFmpeg
    /// as it plays) does not wait: an unreachable server is reported as the connectivity warning, then as a fatal
    /// `source_unavailable`.
    public var waitsForConnectivity: Bool?
    /// Which addresses the player's requests may reach (manifests, segments, keys, progressive downloads, and each
    /// redirect), checked after DNS. Default ``AddressPolicy/any``; a service that plays what its users give it
    /// sets ``AddressPolicy/publicOnly``, and a refused request is a fatal `source_unavailable` error.
    public var addressPolicy: AddressPolicy?

    /// Creates a configuration; unset fields fall back to the SDK-wide configuration, then to the defaults.
    public init(
        httpAdditionalHeaders: [String: String]? = nil, allowsCellularAccess: Bool? = nil,
        timeoutIntervalForResourceMs: Int? = nil, timeoutIntervalForDrmAcquisitionMs: Int? = nil,
        waitsForConnectivity: Bool? = nil, addressPolicy: AddressPolicy? = nil
    ) {
        self.httpAdditionalHeaders = httpAdditionalHeaders
        self.allowsCellularAccess = allowsCellularAccess
        self.timeoutIntervalForResourceMs = timeoutIntervalForResourceMs
        self.timeoutIntervalForDrmAcquisitionMs = timeoutIntervalForDrmAcquisitionMs
        self.waitsForConnectivity = waitsForConnectivity
        self.addressPolicy = addressPolicy
    }

    /// The SDK-wide configuration overlaid with the player's: every field the player sets wins; headers merge.
    public static func merged(sdk: NetworkConfiguration?, player: NetworkConfiguration?) -> NetworkConfiguration {
        var result = sdk ?? NetworkConfiguration()
        guard let player else { return result }
        if let headers = player.httpAdditionalHeaders {
            result.httpAdditionalHeaders = (result.httpAdditionalHeaders ?? [:]).merging(headers) { _, mine in mine }
        }
        result.allowsCellularAccess = player.allowsCellularAccess ?? result.allowsCellularAccess
        result.timeoutIntervalForResourceMs = player.timeoutIntervalForResourceMs ?? result.timeoutIntervalForResourceMs
        result.timeoutIntervalForDrmAcquisitionMs =
            player.timeoutIntervalForDrmAcquisitionMs ?? result.timeoutIntervalForDrmAcquisitionMs
        result.waitsForConnectivity = player.waitsForConnectivity ?? result.waitsForConnectivity
        result.addressPolicy = player.addressPolicy ?? result.addressPolicy
        return result
    }

    /// `loading` with the set fields laid over it: the one mapping from the player's network settings to a loader's,
    /// used by the player's own requests and by every thumbnails engine made for a player. Headers merge key by key,
    /// `headersWin` saying whose value a name set on both sides keeps (the player's unless the caller's loading
    /// settings were given explicitly); the resource timeout and the address policy replace the loader's when set.
    /// The waiting for connectivity stays with whoever retries (the player's stream session; a loader's
    /// ``RetryPolicy``).
    public func applied(to loading: LoadingConfiguration, headersWin: Bool = true) -> LoadingConfiguration {
        var result = loading
        if let httpAdditionalHeaders {
            result.additionalHeaders.merge(httpAdditionalHeaders) { loader, network in headersWin ? network : loader }
        }
        if let timeoutIntervalForResourceMs, timeoutIntervalForResourceMs > 0 {
            result.resourceTimeout = Double(timeoutIntervalForResourceMs) / 1000
        }
        if let addressPolicy { result.addressPolicy = addressPolicy }
        return result
    }

    /// Applies the set fields to a URLSession configuration (`waitsForConnectivity` only where the platform's
    /// URLSession supports it).
    public func apply(to session: URLSessionConfiguration) {
        if let httpAdditionalHeaders {
            var headers = (session.httpAdditionalHeaders as? [String: String]) ?? [:]
            headers.merge(httpAdditionalHeaders) { _, mine in mine }
            session.httpAdditionalHeaders = headers
        }
        if let allowsCellularAccess { session.allowsCellularAccess = allowsCellularAccess }
        if let timeoutIntervalForResourceMs {
            session.timeoutIntervalForResource = Double(timeoutIntervalForResourceMs) / 1000
        }
        #if !os(Linux)
            // swift-corelibs-foundation exposes this read-only; on Linux the engine's retries do the waiting.
            if let waitsForConnectivity { session.waitsForConnectivity = waitsForConnectivity }
        #endif
    }
}

extension NetworkConfiguration {
    /// What a player's requests go through: on Linux libcurl (``DefaultTransport``), every setting travelling with
    /// each request; elsewhere a URL session of the player's own, configured from these settings.
    func transport() -> any DataLoading {
        #if os(Linux)
            DefaultTransport.shared
        #else
            let session = URLSessionConfiguration.ephemeral
            session.urlCache = nil
            apply(to: session)
            return URLSessionDataLoader(sessionConfiguration: session)
        #endif
    }
}
