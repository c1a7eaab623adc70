import FilmstripSync
public import Foundation

#if canImport(Glibc)
    import Glibc
    private let streamSocket = Int32(SOCK_STREAM.rawValue)
    private let sendFlags = Int32(MSG_NOSIGNAL)
    private let systemSend = Glibc.send
    private typealias Linger = Glibc.linger
#elseif canImport(Darwin)
    import Darwin
    private let streamSocket = SOCK_STREAM
    private let sendFlags: Int32 = 0  // SIGPIPE is off per socket (SO_NOSIGPIPE) on Darwin
    private let systemSend = Darwin.send
    private typealias Linger = Darwin.linger
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

    private struct Resource {
        var body: [UInt8]
        var contentType: String
        var generate: (@Sendable () -> [UInt8]?)?
        /// Answer with this status and `Location` instead of the body.
        var redirect: (status: Int, location: String)?
    }

    private struct State {
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
        var linkFreeAt = 0.0
    }

    private let state = Mutex(State())
    /// The port the server listens on.
    public let port: Int

    /// Starts a server on a free loopback port.
    public init() throws {
        let (fd, port) = try Self.openListener(port: 0)
        self.port = port
        state.withLock { $0.listener = fd }
        startAccepting(fd)
    }

    private static func openListener(port: Int) throws -> (Int32, Int) {
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

    private func startAccepting(_ fd: Int32) {
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
        state.withLock { $0.resources[key] = Resource(body: body, contentType: contentType) }
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

    /// Sends every response under `prefix` at `bytesPerSecond` from now on (`nil` lifts it).
    public func throttle(prefix: String, bytesPerSecond: Int?) {
        state.withLock { $0.throttles[Self.normalize(prefix)] = bytesPerSecond }
    }

    /// Takes the server off the network (`false`: the listening socket and every connection close, so clients get
    /// "connection refused") or back on it, on the same port, with the same resources.
    public func setReachable(_ reachable: Bool) throws {
        let (wasReachable, listener) = state.withLock { s -> (Bool, Int32) in
            defer { s.reachable = reachable }
            if s.reachable, !reachable { Self.shutDown(s.connections) }
            return (s.reachable, s.listener)
        }
        guard wasReachable != reachable else { return }
        if !reachable {
            closeListener(listener)
            return
        }
        let (fd, _) = try Self.openListener(port: port)
        state.withLock { $0.listener = fd }
        startAccepting(fd)
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
        let (wasStopped, listener, reachable) = state.withLock { s -> (Bool, Int32, Bool) in
            defer { s.stopped = true }
            if !s.stopped { Self.shutDown(s.connections) }
            return (s.stopped, s.listener, s.reachable)
        }
        guard !wasStopped else { return }
        if reachable { closeListener(listener) }
    }

    /// Stops the accept thread, which closes the listening descriptor itself: closing it here could close a number
    /// the process has given to another socket by the time that thread calls `accept` again.
    private func closeListener(_ listener: Int32) {
        shutdown(listener, Int32(SHUT_RDWR))
        state.withLock { $0.listenerClosed }?.wait()
    }

    /// Shuts connections down. Called with the state locked: a connection's thread leaves the set (under the lock)
    /// before it closes its descriptor, so every descriptor here is still this server's, never a number the process
    /// has since given to another socket.
    private static func shutDown(_ connections: Set<Int32>) {
        for fd in connections { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    private static func normalize(_ path: String) -> String { path.hasPrefix("/") ? path : "/" + path }

    // MARK: Serving

    /// Accepts until the listener is shut down (the caller then closes it). Connections that arrive while the
    /// server is stopping are closed.
    private func acceptLoop(_ listener: Int32) {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                switch errno {
                case EINTR, ECONNABORTED: continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    usleep(10_000)
                    continue
                default: return  // EINVAL: shut down
                }
            }
            let accepted = state.withLock { s -> Bool in
                guard !s.stopped, s.reachable else { return false }
                s.connections.insert(client)
                return true
            }
            guard accepted else {
                close(client)
                continue
            }
            var one: Int32 = 1
            setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            #if canImport(Darwin)
                setsockopt(client, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
            #endif
            let thread = Thread { [self] in
                handle(client)
                state.withLock { _ = $0.connections.remove(client) }
                close(client)
            }
            thread.start()
        }
    }

    private func handle(_ fd: Int32) {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            // Read until the end of the request head.
            var headEnd: Int?
            while headEnd == nil {
                headEnd = Self.find(buffer, [13, 10, 13, 10])
                if headEnd != nil { break }
                let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n <= 0 { return }
                buffer.append(contentsOf: chunk[0..<n])
                if buffer.count > 64 * 1024 { return }
            }
            let head = String(decoding: buffer[0..<headEnd!], as: UTF8.self)
            buffer.removeFirst(headEnd! + 4)
            guard let request = Self.parse(head) else { return }
            let keepAlive = respond(to: request, on: fd)
            if !keepAlive { return }
        }
    }

    /// Answers one request; returns whether the connection stays open.
    private func respond(to request: Request, on fd: Int32) -> Bool {
        let (found, fault, throttle) = state.withLock { s -> (Resource?, Fault?, Int?) in
            s.requests.append(request)
            var fault: Fault?
            // Exact target first, then the path without its query (CMCD query parameters, cache busters).
            let key = s.faults[request.target]?.isEmpty == false ? request.target : request.path
            if var queue = s.faults[key], !queue.isEmpty {
                fault = queue.removeFirst()
                s.faults[key] = queue
            }
            let throttle = s.throttles.first { request.path.hasPrefix($0.key) }?.value
            return (s.resources[request.target] ?? s.resources[request.path], fault, throttle)
        }
        var resource = found
        if let generate = resource?.generate {
            if let body = generate() { resource?.body = body } else { resource = nil }
        }
        var bytesPerSecond = throttle
        switch fault {
        case .reset?:
            var linger = Linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Linger>.size))
            return false
        case .status(let code)?:
            let body = Array("injected status \(code)\n".utf8)
            return send(
                fd, status: code, contentType: "text/plain", body: body, head: request.method == "HEAD",
                answering: request)
        case .delay(let seconds)?:
            Thread.sleep(forTimeInterval: seconds)
        case .throttle(let rate)?:
            bytesPerSecond = rate
        case .truncate(let count)?:
            guard let resource else { break }
            let header = Self.header(status: 200, contentType: resource.contentType, length: resource.body.count)
            _ = writeAll(fd, header + resource.body.prefix(count))
            return false
        case .endless?:
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n"
            guard writeAll(fd, Array(head.utf8)) else { return false }
            // Up to 32 MiB, more than any limit a test sets: a cancelled client may go on draining the socket
            // (FoundationNetworking does), and a truly endless writer would keep it busy.
            let chunk = [UInt8](repeating: 0x41, count: 16 << 10)
            var sent = 0
            while sent < 32 << 20, !state.withLock({ $0.stopped }), writeAll(fd, chunk) { sent += chunk.count }
            return false
        case .neverEnding(let first, let unit)?:
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n"
            guard writeAll(fd, Array((head + first).utf8)) else { return false }
            let chunk = Array(String(repeating: unit, count: max(1, (64 << 10) / max(1, unit.utf8.count))).utf8)
            while !state.withLock({ $0.stopped }), writeAll(fd, chunk) {}
            return false
        case nil:
            break
        }
        if let redirect = resource?.redirect {
            return send(
                fd, status: redirect.status, contentType: "text/plain", body: [], head: false,
                extraHeaders: "Location: \(redirect.location)\r\n", answering: request)
        }
        guard let resource else {
            return send(
                fd, status: 404, contentType: "text/plain", body: Array("not found\n".utf8),
                head: request.method == "HEAD", answering: request)
        }
        // Validators for conditional requests: an ETag from the body, answered with 304 when it matches.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in resource.body { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let etag = "\"\(resource.body.count)-\(String(hash, radix: 16))\""
        if request.headers["if-none-match"] == etag {
            return send(
                fd, status: 304, contentType: resource.contentType, body: [], head: true,
                extraHeaders: "ETag: \(etag)\r\n", answering: request)
        }
        var status = 200
        var body = resource.body[...]
        var extraHeaders = "Accept-Ranges: bytes\r\nETag: \(etag)\r\n"
        if let range = request.headers["range"] {
            guard let (start, end) = Self.byteRange(range, size: resource.body.count) else {
                extraHeaders += "Content-Range: bytes */\(resource.body.count)\r\n"
                return send(
                    fd, status: 416, contentType: "text/plain", body: [], head: false, extraHeaders: extraHeaders,
                    answering: request)
            }
            status = 206
            body = resource.body[start...end]
            extraHeaders += "Content-Range: bytes \(start)-\(end)/\(resource.body.count)\r\n"
        }
        return send(
            fd, status: status, contentType: resource.contentType, body: Array(body), head: request.method == "HEAD",
            bytesPerSecond: bytesPerSecond, extraHeaders: extraHeaders, counting: request.target, answering: request)
    }

    /// Writes a response. Body bytes are counted for `counting` as they are handed to the socket, so a client
    /// that closes early (as open-ended range readers do) is charged only for what was actually sent.
    private func send(
        _ fd: Int32, status: Int, contentType: String, body: [UInt8], head: Bool, bytesPerSecond: Int? = nil,
        extraHeaders: String = "", counting target: String? = nil, answering request: Request? = nil
    ) -> Bool {
        if let request { state.withLock { $0.statuses.append((request.target, status)) } }
        let header = Self.header(status: status, contentType: contentType, length: body.count, extra: extraHeaders)
        guard writeAll(fd, header) else { return false }
        if head { return true }
        if let link = state.withLock({ $0.linkRate }), link > 0 {
            // Slices of 16 KiB, each waiting for its turn on the shared link.
            var offset = 0
            while offset < body.count {
                let end = min(body.count, offset + 16 << 10)
                let now = Double(DispatchTime.now().uptimeNanoseconds) / 1e9
                let done = state.withLock { s -> Double in
                    let start = max(now, s.linkFreeAt)
                    s.linkFreeAt = start + Double(end - offset) / Double(link)
                    return s.linkFreeAt
                }
                let wait = done - now
                if wait > 0 { Thread.sleep(forTimeInterval: wait) }
                guard writeAll(fd, Array(body[offset..<end]), counting: target) else { return false }
                offset = end
                if state.withLock({ $0.stopped }) { return false }
            }
            return true
        }
        guard let rate = bytesPerSecond, rate > 0 else { return writeAll(fd, body, counting: target) }
        // Drip the body in 10 slices a second.
        let slice = max(1, rate / 10)
        var offset = 0
        while offset < body.count {
            let end = min(body.count, offset + slice)
            guard writeAll(fd, Array(body[offset..<end]), counting: target) else { return false }
            offset = end
            if offset < body.count { Thread.sleep(forTimeInterval: 0.1) }
            if state.withLock({ $0.stopped }) { return false }
        }
        return true
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8], counting target: String? = nil) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                systemSend(fd, raw.baseAddress! + offset, min(raw.count - offset, 64 << 10), sendFlags)
            }
            if n <= 0 { return false }
            offset += n
            if let target { state.withLock { $0.bytesSent[target, default: 0] += n } }
        }
        return true
    }

    /// `bytes=a-b`, `bytes=a-` or `bytes=-n` within `size`; `nil` when unsatisfiable or malformed.
    static func byteRange(_ header: String, size: Int) -> (Int, Int)? {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let spec = header.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
        guard spec.count == 2 else { return nil }
        if spec[0].isEmpty {
            guard let suffix = Int(spec[1]), suffix > 0, size > 0 else { return nil }
            return (max(0, size - suffix), size - 1)
        }
        guard let start = Int(spec[0]), start < size else { return nil }
        let end = spec[1].isEmpty ? size - 1 : min(size - 1, Int(spec[1]) ?? -1)
        return end >= start ? (start, end) : nil
    }

    private static func header(status: Int, contentType: String, length: Int, extra: String = "") -> [UInt8] {
        let reasons = [
            200: "OK", 206: "Partial Content", 301: "Moved Permanently", 302: "Found", 304: "Not Modified",
            404: "Not Found", 416: "Range Not Satisfiable",
            500: "Internal Server Error", 503: "Service Unavailable",
        ]
        let reason = reasons[status] ?? "Status"
        let text =
            "HTTP/1.1 \(status) \(reason)\r\nContent-Type: \(contentType)\r\nContent-Length: \(length)\r\n"
            + extra + "Connection: keep-alive\r\n\r\n"
        return Array(text.utf8)
    }

    private static func parse(_ head: String) -> Request? {
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        guard !lines.isEmpty else { return nil }
        let requestLine = lines.removeFirst().split(separator: " ")
        guard requestLine.count >= 2 else { return nil }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Request(method: String(requestLine[0]), target: String(requestLine[1]), headers: headers)
    }

    private static func find(_ haystack: [UInt8], _ needle: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if Array(haystack[i..<(i + needle.count)]) == needle { return i }
        }
        return nil
    }
}

/// A failure to start the loopback server.
public struct ServerError: Error, CustomStringConvertible {
    /// What went wrong.
    public var description: String
    init(_ description: String) { self.description = description }
}
