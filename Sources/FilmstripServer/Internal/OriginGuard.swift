import Hummingbird

/// Keeps other web sites out of a library served on this machine.
///
/// Bound to a loopback address, the server answers only requests whose `Host` names loopback (`127.0.0.1`,
/// `localhost`, `[::1]`): a page whose domain an attacker re-points at 127.0.0.1 (DNS rebinding) sends its own name
/// and gets 421. The API and the media refuse requests a browser marks `Sec-Fetch-Site: cross-site`, so another site
/// can neither start generations nor probe for files with `<img>` or `<video>`; and every response tells browsers
/// not to hand it to another origin (`Cross-Origin-Resource-Policy: same-origin`), but image URLs, which other pages
/// embed: `same-site` on loopback (a front end on another port of this machine), `cross-origin` with
/// `Access-Control-Allow-Origin: *` when the server is bound beyond loopback.
struct OriginGuard<Context: RequestContext>: RouterMiddleware {
    /// Whether the server is bound to a loopback address.
    let loopbackOnly: Bool

    /// The host part of a `Host` value: `[v6]:port`, `name:port` or `name`.
    static func hostName(_ authority: String) -> String {
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            return String(authority[...close])
        }
        if let colon = authority.lastIndex(of: ":") { return String(authority[..<colon]) }
        return authority
    }

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        if loopbackOnly, !ServerConfiguration.isLoopback(Self.hostName(request.head.authority ?? "")) {
            return Self.refusal(.misdirectedRequest, "this server answers only to 127.0.0.1, localhost and [::1]")
        }
        let path = request.uri.path
        // Image URLs are refused to other sites too while the server is bound to loopback: a page elsewhere could
        // otherwise start decodes and generations in a library on this machine, or time answers to probe for files.
        if request.headers[.init("Sec-Fetch-Site")!] == "cross-site",
            path.hasPrefix("/api/") || path.hasPrefix("/media/") || (loopbackOnly && Self.isImageAPI(path))
        {
            return Self.refusal(.forbidden, "not available to other sites")
        }
        var response = try await next(request, context)
        if Self.isImageAPI(path) {
            // Image URLs are made to be embedded: by any site when the server is deployed (bound beyond loopback),
            // by this machine's own sites (any port) when it is bound to loopback.
            response.headers[.init("Cross-Origin-Resource-Policy")!] = loopbackOnly ? "same-site" : "cross-origin"
            if !loopbackOnly { response.headers[.accessControlAllowOrigin] = "*" }
        } else {
            response.headers[.init("Cross-Origin-Resource-Policy")!] = "same-origin"
        }
        return response
    }

    /// Whether `path` is an image URL or the list of their ids (see ``LibraryServer/imageNames``).
    static func isImageAPI(_ path: String) -> Bool {
        path == "/videos.json" || LibraryServer.imageNames.keys.contains { path.hasSuffix("/" + $0) }
    }

    private static func refusal(_ status: HTTPResponse.Status, _ message: String) -> Response {
        Response(
            status: status,
            headers: [
                .contentType: "text/plain; charset=utf-8", .init("Cross-Origin-Resource-Policy")!: "same-origin",
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(string: message + "\n")))
    }
}
