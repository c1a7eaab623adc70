package import FilmstripLoading
package import Foundation

/// How a ``MediaInput`` reaches the network.
package struct MediaNetwork: Sendable {
    var transport: any DataLoading
    var configuration: LoadingConfiguration

    package init(transport: any DataLoading, configuration: LoadingConfiguration) {
        self.transport = transport
        self.configuration = configuration
    }
}

/// Where a ``MediaInput``'s bytes come from. Only a URL input carries a network: a stream or a segment in memory
/// opens nothing else.
package enum MediaSource {
    /// A file or an http(s) URL; the resources it names (an HLS playlist's segments) come through `network`.
    case url(URL, network: MediaNetwork)
    /// A forward-only byte stream (a player's segments, in order), named `label` in errors.
    case stream(ByteStream, label: URL)
    /// One segment and its initialisation data in memory, named `label` in errors.
    case memory(Data, label: URL)

    /// The URL the input is known by.
    var url: URL {
        switch self {
        case .url(let url, _), .stream(_, let url), .memory(_, let url): url
        }
    }
}
