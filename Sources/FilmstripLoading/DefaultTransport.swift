/// The HTTP transport every part of Filmstrip uses unless it is given one: ``CurlDataLoader`` on Linux (libcurl,
/// which bounds every body whatever the server sends), ``URLSessionDataLoader`` on Apple platforms. One instance for
/// the process, so every request shares its connections.
public enum DefaultTransport {
    /// The shared transport.
    public static let shared: any DataLoading = {
        #if canImport(CCurl)
            CurlDataLoader()
        #else
            URLSessionDataLoader()
        #endif
    }()
}
