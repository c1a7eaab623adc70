import FilmstripTesting
import Foundation
import Testing

@testable import FilmstripLoading

/// Servers and URLs that try to make a fetcher misbehave: redirects out of HTTP, in loops or without end, bodies
/// that never end or drip, headers that would split a request, and (under the address policy) addresses inside the
/// fetcher's own network.
/// The transports: libcurl (the default on Linux) and URLSession (the default on Apple platforms). Each platform's
/// hostile-server tests run its own default: on Linux, FoundationNetworking's URLSession answers redirects late
/// under load (they timed out while the rest of the suite ran beside them), one more reason it is not used there.
enum Transport: String, CaseIterable, Sendable, CustomStringConvertible {
    #if os(Linux)
        case curl
    #endif
    case urlSession

    static let made: [Transport: any DataLoading] = Dictionary(
        uniqueKeysWithValues: allCases.map { ($0, $0.makeLoader()) })

    private func makeLoader() -> any DataLoading {
        switch self {
        #if os(Linux)
            case .curl: return CurlDataLoader()
        #endif
        case .urlSession: return URLSessionDataLoader()
        }
    }

    /// The platform's default transport.
    static var tested: [Transport] {
        #if os(Linux)
            [.curl]
        #else
            [.urlSession]
        #endif
    }

    /// The loader (one per transport for the test run, as an app would keep one).
    var loader: any DataLoading { Self.made[self]! }
    var description: String { rawValue }
}

@Suite("Hostile servers and URLs")
struct HostileServerTests {
    let server: LoopbackServer

    init() throws {
        server = try LoopbackServer()
        server.serve("/ok.bin", body: Array("fine".utf8))
    }

    func load(
        _ url: URL, _ configuration: LoadingConfiguration = fastRetries(1), on transport: Transport
    ) async -> LoadingError? {
        await loadingError { _ = try await transport.loader.load(url, configuration: configuration) }
    }

    @Test(
        "redirects are followed within the bound; one more is refused; loops are refused at the repeat",
        arguments: Transport.tested)
    func redirects(_ transport: Transport) async throws {
        for k in 0..<12 { server.redirect("/hop\(k)", to: k == 11 ? "/ok.bin" : "/hop\(k + 1)") }
        // hop1 … hop11 then ok.bin: 11 redirects, one over the default bound.
        let tooMany = await load(server.url("/hop1"), on: transport)
        #expect(tooMany?.kind == .refused)
        #expect(tooMany?.message.contains("more than 10 redirects") == true)
        #expect(server.requestCount("/ok.bin") == 0)
        // hop2 … ok.bin: exactly 10.
        let response = try await transport.loader.load(server.url("/hop2"), configuration: fastRetries(1))
        #expect(response.data == Data("fine".utf8))
        var tight = fastRetries(1)
        tight.maximumRedirects = 2
        #expect(await load(server.url("/hop8"), tight, on: transport)?.kind == .refused)
        #expect(server.requestCount("/hop11") == 2, "the tight run stopped before its third hop")
        server.redirect("/a", to: "/b")
        server.redirect("/b", to: server.url("/a").absoluteString)
        let loop = await load(server.url("/a"), on: transport)
        #expect(loop?.kind == .refused)
        #expect(loop?.message.contains("loop") == true)
        #expect(server.requestCount("/a") == 1 && server.requestCount("/b") == 1)
    }

    @Test(
        "a redirect to file:, /etc/passwd, /dev or another scheme is never followed",
        arguments: [
            "file:///etc/passwd", "file:///dev/zero", "file:///proc/self/environ", "ftp://127.0.0.1/x", "gopher://x/",
            "data:text/plain,secret",
        ], Transport.tested)
    func redirectOutOfHTTP(location: String, transport: Transport) async throws {
        server.redirect("/jump", to: location)
        let error = try #require(await load(server.url("/jump"), on: transport))
        #expect(error.kind == .refused, "\(error.kind): \(error.message)")
        #expect(error.message.contains("http and https only"))
        #expect(server.requests.map(\.path) == ["/jump"])
    }

    @Test(
        "under the address policy a redirect to a private address is refused before it is followed",
        arguments: Transport.tested)
    func redirectToPrivateAddress(_ transport: Transport) async throws {
        // The loopback server's own address is let through for the first request only; every hop is checked.
        var configuration = fastRetries(1)
        configuration.addressPolicy = .publicOnly
        configuration.policyExemptHosts = ["127.0.0.1"]
        server.redirect("/to-self", to: "/ok.bin")
        #expect(
            try await transport.loader.load(server.url("/to-self"), configuration: configuration).data.count == 4)
        for target in [
            "http://169.254.169.254/latest/meta-data/", "http://localhost:\(server.url("/").port ?? 0)/ok.bin",
            "http://[::1]/", "http://10.0.0.1/", "http://192.168.1.1/",
        ] {
            configuration.policyExemptHosts = ["127.0.0.1"]
            server.redirect("/to-private", to: target)
            let error = try #require(await load(server.url("/to-private"), configuration, on: transport))
            #expect(error.kind == .refused, "\(target): \(error.message)")
            #expect(error.message.contains("address policy"), "\(target): \(error.message)")
        }
        #expect(server.requestCount("/ok.bin") == 1, "only the allowed hop reached the server")
    }

    @Test(
        "cancels and deadlines that land while a redirect is being answered end the request cleanly",
        arguments: [AddressPolicy.any, .publicOnly], Transport.tested)
    func cancelDuringRedirects(policy: AddressPolicy, transport: Transport) async throws {
        for k in 0..<4 { server.redirect("/chain\(k)", to: k == 3 ? "/ok.bin" : "/chain\(k + 1)") }
        var configuration = fastRetries(1)
        configuration.addressPolicy = policy
        configuration.policyExemptHosts = ["127.0.0.1"]
        let loader = transport.loader
        var generator = SystemRandomNumberGenerator()
        let outcomes = await withTaskGroup(of: String.self) { group in
            for k in 0..<120 {
                // A third end at a deadline inside the chain; the others are cancelled at a random moment.
                var each = configuration
                if k % 3 == 0 { each.resourceTimeout = Double.random(in: 0.001...0.03, using: &generator) }
                let chosen = each
                let delay = UInt64.random(in: 0...30_000_000, using: &generator)
                group.addTask {
                    let request = Task { try await loader.load(server.url("/chain0"), configuration: chosen) }
                    if k % 3 != 0 {
                        // A real pause: the race is with the loader's own threads following redirects over
                        // loopback, which no clock of the test's moves.
                        try? await Task.sleep(nanoseconds: delay)
                        request.cancel()
                    }
                    do {
                        return try await request.value.data == Data("fine".utf8) ? "ok" : "wrong body"
                    } catch let error as LoadingError {
                        return error.kind == .cancelled || error.kind == .timedOut ? "stopped" : "\(error.kind)"
                    } catch {
                        return "\(error)"
                    }
                }
            }
            return await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(outcomes.count == 120)
        #expect(outcomes.allSatisfy { $0 == "ok" || $0 == "stopped" }, "\(Set(outcomes))")
    }

    @Test("a header value with CR or LF is refused before anything is sent", arguments: Transport.tested)
    func headerInjection(_ transport: Transport) async {
        for bad in ["a\r\nX-Injected: 1", "a\nb", "a\rb", "a\u{0}b"] {
            var configuration = fastRetries(1)
            configuration.additionalHeaders = ["X-Token": bad]
            #expect(await load(server.url("/ok.bin"), configuration, on: transport)?.kind == .refused)
            configuration.additionalHeaders = [bad: "1"]
            #expect(await load(server.url("/ok.bin"), configuration, on: transport)?.kind == .refused)
        }
        #expect(server.requests.isEmpty)
    }

    @Test(
        "a never-ending body stops at the size limit; a slow drip stops at the resource timeout",
        arguments: Transport.tested)
    func endlessAndDrip(_ transport: Transport) async {
        server.fail("/endless", with: [.endless])
        var limited = fastRetries(1)
        limited.maximumResponseSize = 1 << 20
        #expect(await load(server.url("/endless"), limited, on: transport)?.kind == .tooLarge(limit: 1 << 20))
        server.serve("/drip.bin", body: [UInt8](repeating: 7, count: 100_000))
        // 100 KB at 500 B/s: 200 s to the end of the body, a slice every 0.1 s (never idle for the request timeout).
        server.fail("/drip.bin", with: [.throttle(bytesPerSecond: 500)])
        var impatient = fastRetries(1)
        impatient.resourceTimeout = 1
        let started = Date()
        let error = await load(server.url("/drip.bin"), impatient, on: transport)
        #expect(error?.kind == .timedOut)
        #expect(error?.message.contains("did not finish within") == true, "\(String(describing: error))")
        // Far sooner than the body's 200 s; the bound leaves room for a loaded machine (a test process whose other
        // tests hold every core may resume this task late).
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed >= 0.95, "failed after \(elapsed) s")
    }

    @Test(
        "publicOnly refuses loopback, private, link-local and metadata addresses before connecting",
        arguments: [
            "127.0.0.1", "localhost", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1",
            "0.0.0.0", "[::1]", "[fe80::1]", "[fd00::1]", "[::ffff:127.0.0.1]", "224.0.0.1",
        ], Transport.tested)
    func privateAddresses(host: String, transport: Transport) async throws {
        var configuration = fastRetries(1)
        configuration.addressPolicy = .publicOnly
        let url = try #require(URL(string: "http://\(host):\(server.port)/ok.bin"))
        let error = await load(url, configuration, on: transport)
        #expect(error?.kind == .refused, "\(String(describing: error))")
        #expect(server.requests.isEmpty)
    }

    @Test("the policy's address classes: public unicast passes, everything internal is named")
    func addressClasses() {
        func v6(_ text: String) -> [UInt8] {
            var address = in6_addr()
            _ = inet_pton(AF_INET6, text, &address)
            return withUnsafeBytes(of: address) { Array($0) }
        }
        #expect(AddressPolicy.refusal([8, 8, 8, 8]) == nil)
        #expect(AddressPolicy.refusal([1, 1, 1, 1]) == nil)
        #expect(AddressPolicy.refusal(v6("2606:4700:4700::1111")) == nil)
        #expect(AddressPolicy.refusal([172, 32, 0, 1]) == nil, "172.32/16 is outside 172.16/12")
        #expect(AddressPolicy.refusal([172, 31, 255, 255]) != nil)
        #expect(AddressPolicy.refusal(v6("64:ff9b::a00:1")) != nil, "NAT64 of 10.0.0.1")
        #expect(AddressPolicy.refusal(v6("2002:c0a8:0101::1")) != nil, "6to4 of 192.168.1.1")
        #expect(AddressPolicy.refusal(v6("2001:db8::1")) != nil)
        #expect(AddressPolicy.any.refusal(host: "127.0.0.1") == nil)
    }

    @Test("a local track's image that is a device or FIFO is refused, not read forever")
    func devices() async {
        let loader = ResourceLoader(configuration: fastRetries(1))
        let error = await loadingError { _ = try await loader.data(for: URL(fileURLWithPath: "/dev/zero")) }
        #expect(error?.kind == .fileUnreadable)
        // The path that reads a local image without the network (an offline lookup) refuses them too: an endless
        // device is not read at all, a FIFO never opened (its open would wait for a writer).
        #expect(loader.localData(for: URL(fileURLWithPath: "/dev/urandom")) == nil)
        #expect(loader.localData(for: URL(fileURLWithPath: "/dev/zero"), range: 0..<16) == nil)
        let directory = try? TemporaryDirectory()
        defer { directory?.remove() }
        if let fifo = directory?.url.appendingPathComponent("track.fifo") {
            #expect(mkfifo(fifo.path, 0o600) == 0)
            #expect(loader.localData(for: fifo) == nil)
            #expect(LocalFile.problem(fifo) != nil)
        }
    }

    @Test("a local file past the size limit is not read whole by the offline path")
    func largeLocalFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.url.appendingPathComponent("big.jpg")
        try Data(count: 4096).write(to: file)
        let loader = ResourceLoader(configuration: LoadingConfiguration(maximumResponseSize: 1024))
        #expect(loader.localData(for: file) == nil)
        #expect(loader.localData(for: file, range: 0..<512)?.count == 512)
    }
}

@Suite("Error messages quote an excerpt")
struct ErrorExcerptTests {
    @Test("a URL of megabytes (from a manifest's attribute) is quoted in part, the rest counted")
    func longURL() {
        let url = URL(string: "http://127.0.0.1:1/" + String(repeating: "x", count: 8_000_000))!
        let error = LoadingError(
            .transport, url: url, "the connection failed",
            underlying: LoadingError(.invalidContent, url: url, String(repeating: "y", count: 100_000)))
        #expect(error.description.utf8.count < 1_000, "\(error.description.utf8.count) bytes")
        #expect(error.description.contains("more bytes)"))
    }
}
