import FilmstripLoading
import FilmstripTesting
import Foundation
import Testing

func fastRetries(_ attempts: Int = 3) -> LoadingConfiguration {
    LoadingConfiguration(
        requestTimeout: 5, resourceTimeout: 10, retry: RetryPolicy(maximumAttempts: attempts, baseDelay: 0.01))
}

func loadingError(_ body: () async throws -> Void) async -> LoadingError? {
    do {
        try await body()
        return nil
    } catch let error as LoadingError {
        return error
    } catch {
        Issue.record("unexpected error type: \(error)")
        return nil
    }
}

@Suite("HTTP loading over loopback")
struct HTTPLoadingTests {
    let server: LoopbackServer
    let body = Array((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })

    init() throws {
        server = try LoopbackServer()
        server.serve("/file.bin", body: body)
    }

    @Test("a 200 response delivers the body")
    func success() async throws {
        let loader = ResourceLoader(configuration: fastRetries())
        let data = try await loader.data(for: server.url("/file.bin"))
        #expect(Array(data) == body)
        #expect(loader.networkStatistics.requests == 1)
    }

    @Test("404 fails at once with the status and URL, without retries")
    func notFound() async {
        let loader = ResourceLoader(configuration: fastRetries())
        let error = await loadingError { _ = try await loader.data(for: server.url("/missing.jpg")) }
        #expect(error?.kind == .httpStatus(404))
        #expect(error?.url == server.url("/missing.jpg"))
        #expect(error?.description.contains("missing.jpg") == true)
        #expect(server.requestCount("/missing.jpg") == 1)
    }

    @Test("500 then 200: the retry succeeds")
    func retryAfterServerError() async throws {
        server.fail("/file.bin", with: [.status(500)])
        let loader = ResourceLoader(configuration: fastRetries())
        let data = try await loader.data(for: server.url("/file.bin"))
        #expect(data.count == body.count)
        #expect(server.requestCount("/file.bin") == 2)
    }

    @Test("persistent 503 gives up after the configured attempts")
    func retriesExhausted() async {
        server.fail("/file.bin", with: [.status(503), .status(503), .status(503), .status(503)])
        let loader = ResourceLoader(configuration: fastRetries(3))
        let error = await loadingError { _ = try await loader.data(for: server.url("/file.bin")) }
        #expect(error?.kind == .httpStatus(503))
        #expect(server.requestCount("/file.bin") == 3)
    }

    @Test("a reset connection is a transport error, and is retried")
    func reset() async throws {
        let once = ResourceLoader(configuration: fastRetries(1))
        server.fail("/file.bin", with: [.reset])
        let error = await loadingError { _ = try await once.data(for: server.url("/file.bin")) }
        #expect(error?.kind == .transport)
        server.fail("/file.bin", with: [.reset])
        let retrying = ResourceLoader(configuration: fastRetries(3))
        #expect(try await retrying.data(for: server.url("/file.bin")).count == body.count)
    }

    @Test("a body cut short of its Content-Length is truncated, never returned")
    func truncated() async throws {
        server.fail("/file.bin", with: [.truncate(afterBytes: 1000)])
        let once = ResourceLoader(configuration: fastRetries(1))
        let error = await loadingError { _ = try await once.data(for: server.url("/file.bin")) }
        #expect(
            error.map { if case .truncated(expected: 50_000, received: _) = $0.kind { true } else { false } } == true,
            "\(String(describing: error))")
        server.fail("/file.bin", with: [.truncate(afterBytes: 10)])
        let retrying = ResourceLoader(configuration: fastRetries(2))
        #expect(try await retrying.data(for: server.url("/file.bin")).count == body.count)
    }

    @Test("a server slower than the request timeout fails with timedOut, promptly")
    func slowServer() async {
        server.fail("/file.bin", with: [.delay(120)])
        let loader = ResourceLoader(
            configuration: LoadingConfiguration(requestTimeout: 0.5, resourceTimeout: 10, retry: .none))
        let started = Date()
        let error = await loadingError { _ = try await loader.data(for: server.url("/file.bin")) }
        #expect(error?.kind == .timedOut)
        // Not early (sub-second timeouts must not round to zero); not late either, which the kind says: the server's
        // 120 s delay would have ended in a response, not a timeout.
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed >= 0.45, "failed after \(elapsed) s")
    }

    @Test("a body that keeps arriving does not trip the idle timeout")
    func slowButSteady() async throws {
        // 50 KB over about 2.5 s, a slice every 0.1 s: more than twice the idle timeout in all, never near it between
        // slices (with room for a loaded machine).
        server.fail("/file.bin", with: [.throttle(bytesPerSecond: 20_000)])
        let loader = ResourceLoader(
            configuration: LoadingConfiguration(requestTimeout: 1, resourceTimeout: 20, retry: .none))
        #expect(try await loader.data(for: server.url("/file.bin")).count == body.count)
    }

    @Test("a body that drips slower than the resource timeout fails with timedOut")
    func drip() async {
        // 50 KB at 500 B/s: 100 s to the end of the body.
        server.fail("/file.bin", with: [.throttle(bytesPerSecond: 500)])
        let loader = ResourceLoader(
            configuration: LoadingConfiguration(requestTimeout: 5, resourceTimeout: 0.8, retry: .none))
        let started = Date()
        let error = await loadingError { _ = try await loader.data(for: server.url("/file.bin")) }
        #expect(error?.kind == .timedOut)
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed >= 0.75, "failed after \(elapsed) s")
    }

    @Test("a body over the size limit is refused")
    func oversized() async {
        let loader = ResourceLoader(
            configuration: LoadingConfiguration(maximumResponseSize: 10_000, retry: .none))
        let error = await loadingError { _ = try await loader.data(for: server.url("/file.bin")) }
        #expect(error?.kind == .tooLarge(limit: 10_000))
    }

    @Test("configured headers are sent")
    func headers() async throws {
        let loader = ResourceLoader(
            configuration: LoadingConfiguration(additionalHeaders: ["X-Filmstrip-Test": "yes"]))
        _ = try await loader.data(for: server.url("/file.bin"))
        #expect(server.requests.last?.headers["x-filmstrip-test"] == "yes")
    }

    @Test("identical in-flight requests share one download; cancelling one waiter spares the others")
    func sharing() async throws {
        server.fail("/file.bin", with: [.delay(2)])
        let loader = ResourceLoader(configuration: fastRetries())
        let url = server.url("/file.bin")
        let cancelled = Task { try await loader.data(for: url) }
        let results = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 { group.addTask { try await loader.data(for: url).count } }
            // The download is under way (the server holds it 2 s); whoever asks meanwhile shares it.
            _ = await eventually { server.requestCount("/file.bin") == 1 }
            cancelled.cancel()
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(results == Array(repeating: body.count, count: 8))
        await #expect(throws: CancellationError.self) { _ = try await cancelled.value }
        #expect(server.requestCount("/file.bin") == 1)
    }

    @Test("unsupported schemes are refused")
    func unsupported() async {
        let loader = ResourceLoader()
        let error = await loadingError { _ = try await loader.data(for: URL(string: "ftp://example.com/a")!) }
        #expect(error?.kind == .unsupportedURL)
    }
}

#if canImport(CCurl)
    @Suite("The libcurl transport's memory")
    struct CurlMemoryTests {
        @Test("a request that ended is let go: nothing of it stays in memory")
        func endedRequestsAreReleased() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            server.serve("/a.bin", body: Array(repeating: 7, count: 4096))
            let loader = CurlDataLoader()
            for path in ["/a.bin", "/missing.bin"] {
                weak var handle: AnyObject?
                await withCheckedContinuation { (ended: CheckedContinuation<Void, Never>) in
                    handle =
                        loader.startLoad(server.url(path), configuration: fastRetries(1)) { _ in
                            ended.resume()
                        } as AnyObject?
                }
                // Before the fix, the request and its transfer held each other for good (about 3 KB a request).
                #expect(await eventually(within: 10) { handle == nil }, "\(path)")
            }
        }
    }
#endif
