/// What a path of a ``LoopbackServer`` answers: a body (fixed, or made per request), a redirect, or a handler.
struct LoopbackResource {
    var body: [UInt8]
    var contentType: String
    var generate: (@Sendable () -> [UInt8]?)?
    /// Answer with this status and `Location` instead of the body.
    var redirect: (status: Int, location: String)?
    /// The body's ETag, computed once when the body is served (a generated body gets one per request).
    var etag: String?
    /// Answers the request itself (a POST endpoint): status, content type, body.
    var handle: (@Sendable (LoopbackServer.Request) -> (status: Int, contentType: String, body: [UInt8]))?

    /// An ETag from the body's length and FNV-1a hash.
    static func etag(of body: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in body { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return "\"\(body.count)-\(String(hash, radix: 16))\""
    }
}
