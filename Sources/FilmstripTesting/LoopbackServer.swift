import FilmstripSync
public import Foundation

#if canImport(Glibc)
    import Glibc
    let streamSocket = Int32(SOCK_STREAM.rawValue)
    let sendFlags = Int32(MSG_NOSIGNAL)
    let systemSend = Glibc.send
    typealias Linger = Glibc.linger
#elseif canImport(Darwin)
    import Darwin
    let streamSocket = SOCK_STREAM
    let sendFlags: Int32 = 0  // SIGPIPE is off per socket (SO_NOSIGPIPE) on Darwin
    let systemSend = Darwin.send
    typealias Linger = Darwin.linger
#endif

/// A real HTTP/1.1 server on 127.0.0.1 (port chosen by the kernel) for tests and benchmarks, with fault injection.
///
/// It speaks just enough HTTP for a client library: GET and HEAD, keep-alive, `Content-Length` bodies. Faults are
/// queued per path and consumed one per request, so "500 then 200" is `fail(path, with: [.status(500)])`.
/// Every request is recorded with its headers.
///
/// It is written on sockets rather than on an HTTP framework because the faults tests need (a TCP reset, a body
/// cut short of its `Content-Length`, bytes dripping slower than a timeout) are exactly what a well-behaved
/// framework refuses to produce.
public final class LoopbackServer: Sendable {
    /// One injected misbehaviour, used for one request.
    public enum Fault: Sendable, Hashable {
        /// Answer with this status and a short text body.
        case status(Int)
        /// Wait this many seconds before answering (normally afterwards).
        case delay(Double)
        /// Announce the full length, send only this many body bytes, then close.
        case truncate(afterBytes: Int)
        /// Reset the connection (TCP RST) without answering.
        case reset
        /// Send the body at this many bytes per second.
        case throttle(bytesPerSecond: Int)
        /// Answer 200 with no length and send bytes until the client goes away or 32 MiB are sent (a body with no
        /// end in sight).
        case endless
        /// Answer 200 with no length: `head`, then `unit` over and over until the client goes away or the server
        /// stops (a body that never ends, for clients that stop reading when they have had enough).
        case neverEnding(head: String, unit: String)
    }

    /// A request as the server received it.
    public struct Request: Sendable, Hashable {
        /// `GET`, `HEAD`, …
        public var method: String
        /// The path with its query.
        public var target: String
        /// Header names lower-cased.
        public var headers: [String: String]
        /// When the request arrived.
        public var time = Date()
        /// The body (`Content-Length` bytes, at most 1 MiB).
        public var body: [UInt8] = []

        /// The path without the query.
        public var path: String { target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? target }

        /// The value of query parameter `name` (percent-decoded), if present.
        public func query(_ name: String) -> String? {
            guard let query = target.split(separator: "?", maxSplits: 1).dropFirst().first else { return nil }
            for pair in query.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.first.map(String.init) == name {
                    return parts.count > 1 ? String(parts[1]).removingPercentEncoding : ""
                }
            }
            return nil
        }
    }

    /// What a path answers (``LoopbackResource``).
    typealias Resource = LoopbackResource

    struct State {
        var resources: [String: Resource] = [:]
        var faults: [String: [Fault]] = [:]
        var requests: [Request] = []
        var statuses: [(target: String, status: Int)] = []
        var connections: Set<Int32> = []
        var stopped = false
        var bytesSent: [String: Int] = [:]
        var throttles: [String: Int] = [:]
        var listener: Int32 = -1
        /// Signalled when the accept thread has closed `listener` (after a shutdown).
        var listenerClosed: DispatchSemaphore?
        var reachable = true
        /// A link shared by every response: bytes per second, and when it is next free (monotonic seconds).
        var linkRate: Int?
        var latency: Double = 0
        var linkFreeAt = 0.0
    }

    let state = Mutex(State())
    /// The port the server listens on.
    public let port: Int

    /// Starts a server on a free loopback port.
    public init() throws {
        let (fd, port) = try Self.openListener(port: 0)
        self.port = port
        state.withLock { $0.listener = fd }
        startAccepting(fd)
    }

    static func openListener(port: Int) throws -> (Int32, Int) {
        let fd = socket(AF_INET, streamSocket, 0)
        guard fd >= 0 else { throw ServerError("socket() failed: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        #if canImport(Darwin)
            address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 128) == 0 else {
            close(fd)
            throw ServerError("cannot listen on 127.0.0.1: \(String(cString: strerror(errno)))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    func startAccepting(_ fd: Int32) {
        let closed = DispatchSemaphore(value: 0)
        state.withLock { $0.listenerClosed = closed }
        let thread = Thread { [self] in
            acceptLoop(fd)
            close(fd)
            closed.signal()
        }
        thread.name = "LoopbackServer.accept"
        thread.start()
    }

    deinit { stop() }

    /// `http://127.0.0.1:<port>/`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/")! }

    /// The absolute URL of a path on this server.
    public func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)" + (path.hasPrefix("/") ? path : "/" + path))!
    }

    /// Serves `body` at `path` (which may include a query).
    public func serve(_ path: String, body: [UInt8], contentType: String = "application/octet-stream") {
        let key = Self.normalize(path)
        // Hashed here, not per request: a 180 MB body took 0.2 s a request to hash, which every client then waited.
        let etag = Resource.etag(of: body)
        state.withLock { $0.resources[key] = Resource(body: body, contentType: contentType, etag: etag) }
    }

    /// Serves text at `path`.
    public func serve(_ path: String, text: String, contentType: String = "text/vtt; charset=utf-8") {
        serve(path, body: Array(text.utf8), contentType: contentType)
    }

    /// Serves a body made for each request (a live playlist, say); `nil` answers 404.
    public func serve(
        _ path: String, contentType: String = "application/vnd.apple.mpegurl",
        generate: @escaping @Sendable () -> [UInt8]?
    ) {
        let key = Self.normalize(path)
        state.withLock { $0.resources[key] = Resource(body: [], contentType: contentType, generate: generate) }
    }

    /// Answers every request for `path` with what `handle` makes of it (its method, headers and body), for
    /// endpoints such as a licence server's.
    public func serve(
        _ path: String, handle: @escaping @Sendable (Request) -> (status: Int, contentType: String, body: [UInt8])
    ) {
        let key = Self.normalize(path)
        state.withLock { $0.resources[key] = Resource(body: [], contentType: "", handle: handle) }
    }

    /// Answers every request for `path` with a redirect to `location` (absolute, relative, or any scheme).
    public func redirect(_ path: String, to location: String, status: Int = 302) {
        let key = Self.normalize(path)
        state.withLock {
            $0.resources[key] = Resource(body: [], contentType: "text/plain", redirect: (status, location))
        }
    }

    /// Limits every response body together to `bytesPerSecond`, like one shared network link (`nil` lifts the
    /// limit): concurrent responses share the rate instead of each getting it.
    public func limitLink(bytesPerSecond: Int?) {
        state.withLock { $0.linkRate = bytesPerSecond }
    }

    /// Delays every response by `seconds` before its first byte, like the round trip of a distant server (0 lifts it).
    public func setLatency(_ seconds: Double) {
        state.withLock { $0.latency = max(0, seconds) }
    }

    /// Sends every response under `prefix` at `bytesPerSecond` from now on (`nil` lifts it).
    public func throttle(prefix: String, bytesPerSecond: Int?) {
        state.withLock { $0.throttles[Self.normalize(prefix)] = bytesPerSecond }
    }

    /// Takes the server off the network (`false`: every open connection is closed and every new one is reset as it
    /// arrives, so clients get a transport error) or back on it, with the same resources. The listening socket stays
    /// open: a port given back to the system could go to another test's server meanwhile, whose answers would then
    /// reach this server's clients.
    public func setReachable(_ reachable: Bool) {
        state.withLock { s in
            if s.reachable, !reachable { Self.shutDown(s.connections) }
            s.reachable = reachable
        }
    }

    /// Empties the request log, the statuses and the byte counts (a long run's log is memory the code under test
    /// did not use).
    public func forgetRequests() {
        state.withLock {
            $0.requests = []
            $0.statuses = []
            $0.bytesSent = [:]
        }
    }

    /// Stops serving `path` (requests get 404).
    public func remove(_ path: String) {
        _ = state.withLock { $0.resources.removeValue(forKey: Self.normalize(path)) }
    }

    /// Queues faults for the next requests to `path`, one per request.
    public func fail(_ path: String, with faults: [Fault]) {
        state.withLock { $0.faults[Self.normalize(path), default: []].append(contentsOf: faults) }
    }

    /// Every request received so far.
    public var requests: [Request] { state.withLock { $0.requests } }

    /// The status of every response sent, with the request target, in order.
    public var responseStatuses: [(target: String, status: Int)] { state.withLock { $0.statuses } }

    /// Body bytes handed to the socket for `path` (all requests, ranges included; a response cut short by the
    /// client counts only what was written).
    public func bytesSent(_ path: String) -> Int {
        let key = Self.normalize(path)
        return state.withLock { $0.bytesSent[key] ?? 0 }
    }

    /// How many requests asked for `path`.
    public func requestCount(_ path: String) -> Int {
        let key = Self.normalize(path)
        return state.withLock { $0.requests.filter { $0.target == key || $0.path == key }.count }
    }

    /// Stops listening and closes every open connection. Later requests fail to connect.
    public func stop() {
        let (wasStopped, listener) = state.withLock { s -> (Bool, Int32) in
            defer { s.stopped = true }
            if !s.stopped { Self.shutDown(s.connections) }
            return (s.stopped, s.listener)
        }
        guard !wasStopped else { return }
        closeListener(listener)
    }

    /// Stops the accept thread, which closes the listening descriptor itself: closing it here could close a number
    /// the process has given to another socket by the time that thread calls `accept` again.
    func closeListener(_ listener: Int32) {
        shutdown(listener, Int32(SHUT_RDWR))
        state.withLock { $0.listenerClosed }?.wait()
    }

    /// Shuts connections down. Called with the state locked: a connection's thread leaves the set (under the lock)
    /// before it closes its descriptor, so every descriptor here is still this server's, never a number the process
    /// has since given to another socket.
    static func shutDown(_ connections: Set<Int32>) {
        for fd in connections { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    static func normalize(_ path: String) -> String { path.hasPrefix("/") ? path : "/" + path }
}

/// A failure to start the loopback server.
public struct ServerError: Error, CustomStringConvertible {
    /// What went wrong.
    public var description: String
    init(_ description: String) { self.description = description }
}
