import FilmstripLoading
import FilmstripSync
import FilmstripTesting
import Foundation
import Testing

@Suite("One Range request and one retry loop")
struct ByteRangeTests {
    static let url = URL(string: "https://cdn.example.com/video.mp4")!

    @Test("the Range header and the Content-Range answer, read with bounds")
    func headers() {
        #expect(ByteRangeRequest(url: Self.url, range: 100..<200).rangeHeader == "bytes=100-199")
        #expect(ByteRangeRequest(url: Self.url).rangeHeader == nil)
        #expect(ByteRangeRequest(url: Self.url, range: 5..<5).rangeHeader == nil)
        var configuration = LoadingConfiguration(additionalHeaders: ["Range": "bytes=0-0", "X-A": "1"])
        configuration = ByteRangeRequest(url: Self.url).applied(to: configuration)
        #expect(configuration.additionalHeaders == ["X-A": "1"])

        #expect(ByteRangeRequest.contentRange("bytes 100-199/5000")! == (100, 199, 5000))
        #expect(ByteRangeRequest.contentRange("Bytes 0-0/*")! == (0, 0, nil))
        for hostile in [
            nil, "", "bytes 100-199", "bytes 200-100/5000", "bytes -5-10/20", "bytes 0-9/5",
            "bytes 0-9223372036854775807/9223372036854775807", "bytes 0-99999999999999999999/1", "items 0-1/2",
            "bytes 0-1/NaN", "bytes 0-1-2/9",
        ] {
            #expect(ByteRangeRequest.contentRange(hostile) == nil, "\(hostile ?? "nil")")
        }
    }

    @Test("a 206 holds exactly the range at its place; a 200 is cut to it; anything else is an error")
    func body() throws {
        let request = ByteRangeRequest(url: Self.url, range: 10..<20)
        let part = Data(repeating: 7, count: 10)
        let exact = LoadResponse(data: part, statusCode: 206, headers: ["content-range": "bytes 10-19/100"])
        #expect(try request.body(of: exact) == part)
        #expect(request.placement(of: exact) == (10, 100))

        let short = LoadResponse(data: part.prefix(4), statusCode: 206, headers: ["content-range": "bytes 10-13/100"])
        #expect(throws: LoadingError.self) { try request.body(of: short) }
        let elsewhere = LoadResponse(data: part, statusCode: 206, headers: ["content-range": "bytes 0-9/100"])
        #expect(throws: LoadingError.self) { try request.body(of: elsewhere) }

        let whole = LoadResponse(data: Data((0..<100).map { UInt8($0) }), statusCode: 200)
        #expect(try request.body(of: whole) == Data((10..<20).map { UInt8($0) }))
        #expect(request.placement(of: whole) == (0, 100))
        let tooShort = LoadResponse(data: Data(count: 15), statusCode: 200)
        #expect(throws: LoadingError.self) { try request.body(of: tooShort) }
    }

    @Test("mayEndEarly: a body that stops where the resource ends is the part that exists; a cut one is not")
    func mayEndEarly() throws {
        let request = ByteRangeRequest(url: Self.url, range: 90..<120, mayEndEarly: true)
        let tail = Data(repeating: 3, count: 10)
        let atEnd = LoadResponse(data: tail, statusCode: 206, headers: ["content-range": "bytes 90-99/100"])
        #expect(try request.body(of: atEnd) == tail)
        #expect(throws: LoadingError.self) { try ByteRangeRequest(url: Self.url, range: 90..<120).body(of: atEnd) }
        // Short, but the resource goes on (a cut body), or no total: truncated.
        for header in ["bytes 90-99/500", "bytes 90-99/*"] {
            let cut = LoadResponse(data: tail, statusCode: 206, headers: ["content-range": header])
            #expect(throws: LoadingError.self, "\(header)") { try request.body(of: cut) }
        }
        let longer = LoadResponse(
            data: Data(count: 40), statusCode: 206, headers: ["content-range": "bytes 90-129/130"])
        #expect(throws: LoadingError.self) { try request.body(of: longer) }
        // A 200 (Range ignored) shorter than the range: from the range's start to the end.
        let whole = LoadResponse(data: Data((0..<100).map { UInt8($0) }), statusCode: 200)
        #expect(try request.body(of: whole) == Data((90..<100).map { UInt8($0) }))
        let before = LoadResponse(data: Data(count: 50), statusCode: 200)
        #expect(throws: LoadingError.self) { try request.body(of: before) }
    }

    @Test("ranged loads are retried after transient failures, a short 206 among them, never after a 404")
    func retries() async throws {
        let server = try LoopbackServer()
        let bytes = Array((0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        server.serve("/v.bin", body: bytes)
        let request = ByteRangeRequest(url: server.url("/v.bin"), range: 1000..<3000)
        let attempts = Mutex<[Int]>([])
        server.fail("/v.bin", with: [.status(503), .truncate(afterBytes: 100)])
        let response = try await DefaultTransport.shared.load(request, configuration: fastRetries(3)) { attempt in
            attempts.withLock { $0.append(attempt.number) }
            // Each attempt is prepared afresh: a header of its own, the Range kept.
            attempt.headers["X-Attempt"] = "\(attempt.number)"
            attempt.headers["Range"] = "bytes=0-0"
        }
        #expect(Array(response.data) == Array(bytes[1000..<3000]))
        #expect(attempts.withLock { $0 } == [1, 2, 3])
        #expect(server.requestCount("/v.bin") == 3)
        let sent = server.requests.filter { $0.path == "/v.bin" }
        #expect(sent.map { $0.headers["x-attempt"] } == ["1", "2", "3"])
        #expect(sent.allSatisfy { $0.headers["range"] == "bytes=1000-2999" })

        let missing = ByteRangeRequest(url: server.url("/none.bin"), range: 0..<10)
        let error = await loadingError {
            _ = try await DefaultTransport.shared.load(missing, configuration: fastRetries(3))
        }
        #expect(error?.kind == .httpStatus(404))
        #expect(server.requestCount("/none.bin") == 1)
    }

    @Test("a cancelled task stops the wait between attempts at once, with a cancellation")
    func cancelledWhileWaiting() async throws {
        let server = try LoopbackServer()
        server.serve("/v.bin", body: [1, 2, 3])
        server.fail("/v.bin", with: [.status(503), .status(503)])
        // A minute between attempts: only the cancellation can end this promptly.
        let slow = LoadingConfiguration(retry: RetryPolicy(maximumAttempts: 3, baseDelay: 60, maximumDelay: 60))
        let task = Task {
            try await DefaultTransport.shared.load(ByteRangeRequest(url: server.url("/v.bin")), configuration: slow)
        }
        // Cancelled once the first attempt has been answered (the request log says so).
        _ = await eventually { server.requestCount("/v.bin") >= 1 }
        task.cancel()
        let error = await loadingError { _ = try await task.value }
        #expect(error?.kind == .cancelled)
        #expect(server.requestCount("/v.bin") == 1)
    }
}
