import FilmstripSync
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// MARK: Serving

extension LoopbackServer {

    /// Accepts until the listener is shut down (the caller then closes it). Connections that arrive while the
    /// server is stopping are closed.
    func acceptLoop(_ listener: Int32) {
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
            let (accepted, reachable) = state.withLock { s -> (Bool, Bool) in
                guard !s.stopped, s.reachable else { return (false, s.reachable) }
                s.connections.insert(client)
                return (true, true)
            }
            guard accepted else {
                if !reachable {
                    // Off the network: the connection is reset (RST), not answered.
                    var linger = Linger(l_onoff: 1, l_linger: 0)
                    setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Linger>.size))
                }
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

    func handle(_ fd: Int32) {
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
            guard var request = Self.parse(head) else { return }
            // A body of `Content-Length` bytes (at most 1 MiB).
            let length = min(1 << 20, max(0, request.headers["content-length"].flatMap { Int($0) } ?? 0))
            while buffer.count < length {
                let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n <= 0 { return }
                buffer.append(contentsOf: chunk[0..<n])
            }
            request.body = Array(buffer.prefix(length))
            buffer.removeFirst(length)
            let keepAlive = respond(to: request, on: fd)
            if !keepAlive { return }
        }
    }

    /// Answers one request; returns whether the connection stays open.
    func respond(to request: Request, on fd: Int32) -> Bool {
        let (found, fault, throttle, latency) = state.withLock { s -> (Resource?, Fault?, Int?, Double) in
            s.requests.append(request)
            var fault: Fault?
            // Exact target first, then the path without its query (CMCD query parameters, cache busters).
            let key = s.faults[request.target]?.isEmpty == false ? request.target : request.path
            if var queue = s.faults[key], !queue.isEmpty {
                fault = queue.removeFirst()
                s.faults[key] = queue
            }
            let throttle = s.throttles.first { request.path.hasPrefix($0.key) }?.value
            return (s.resources[request.target] ?? s.resources[request.path], fault, throttle, s.latency)
        }
        if latency > 0 { Thread.sleep(forTimeInterval: latency) }
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
        if let handle = resource?.handle {
            let answer = handle(request)
            return send(
                fd, status: answer.status, contentType: answer.contentType, body: answer.body,
                head: request.method == "HEAD", answering: request)
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
        let etag = resource.etag ?? Resource.etag(of: resource.body)
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
    func send(
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

    func writeAll(_ fd: Int32, _ bytes: [UInt8], counting target: String? = nil) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let size = min(bytes.count - offset, 64 << 10)
            // Counted before the send and corrected after it: a client that has read every byte (and whose test
            // then compares its count with this one) cannot see a count the server has not yet raised.
            if let target { state.withLock { $0.bytesSent[target, default: 0] += size } }
            let n = bytes.withUnsafeBytes { raw in systemSend(fd, raw.baseAddress! + offset, size, sendFlags) }
            if let target, n < size { state.withLock { $0.bytesSent[target, default: 0] -= size - max(n, 0) } }
            if n <= 0 { return false }
            offset += n
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

    static func header(status: Int, contentType: String, length: Int, extra: String = "") -> [UInt8] {
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

    static func parse(_ head: String) -> Request? {
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

    static func find(_ haystack: [UInt8], _ needle: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if Array(haystack[i..<(i + needle.count)]) == needle { return i }
        }
        return nil
    }
}
