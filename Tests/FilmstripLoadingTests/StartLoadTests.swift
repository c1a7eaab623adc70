import FilmstripLoading
import FilmstripSync
import FilmstripTesting
import Foundation
import Testing

@Suite("startLoad: loads for threads outside Swift concurrency")
struct StartLoadTests {
    /// A transport that only implements the async load: it gets `startLoad` from the protocol's default.
    private struct Echo: DataLoading {
        func load(_ url: URL, configuration: LoadingConfiguration) async throws -> LoadResponse {
            if url.path == "/fail" { throw LoadingError(.httpStatus(500), url: url, "fail") }
            return LoadResponse(data: Data(url.path.utf8), statusCode: 200, headers: [:])
        }
    }

    /// Blocks a thread of its own (not one of Swift's cooperative pool) until `start` completes, as FFmpeg's I/O
    /// callbacks do.
    private static func wait(
        _ start:
            @escaping @Sendable (@escaping @Sendable (Result<LoadResponse, any Error>) -> Void) -> (
                any LoadHandle
            )?
    ) async -> (Result<LoadResponse, any Error>, handle: Bool) {
        await withCheckedContinuation { continuation in
            Thread {
                let done = DispatchSemaphore(value: 0)
                let result = Mutex<Result<LoadResponse, any Error>?>(nil)
                let handle = start { outcome in
                    result.withLock { $0 = outcome }
                    done.signal()
                }
                done.wait()
                continuation.resume(returning: (result.withLock { $0 }!, handle != nil))
            }.start()
        }
    }

    @Test("the default runs the async load and completes once, with its result or its error")
    func defaultImplementation() async throws {
        let echo = Echo()
        let (ok, _) = await Self.wait {
            echo.startLoad(URL(string: "https://x.test/a")!, configuration: .init(), completion: $0)
        }
        #expect(try ok.get().data == Data("/a".utf8))
        let (failed, _) = await Self.wait {
            echo.startLoad(URL(string: "https://x.test/fail")!, configuration: .init(), completion: $0)
        }
        #expect(throws: LoadingError.self) { try failed.get() }
    }

    @Test("URLSession's completes from its own queue; a refused URL completes at once with no handle")
    func urlSession() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.serve("/bytes", body: Array(repeating: 7, count: 1000))
        let loader = URLSessionDataLoader()
        let (ok, handle) = await Self.wait {
            loader.startLoad(server.url("/bytes"), configuration: .init(), completion: $0)
        }
        #expect(try ok.get().data.count == 1000)
        #expect(handle)
        let (refused, none) = await Self.wait {
            loader.startLoad(URL(fileURLWithPath: "/etc/passwd"), configuration: .init(), completion: $0)
        }
        #expect(!none)
        #expect {
            try refused.get()
        } throws: { error in
            (error as? LoadingError)?.kind == .unsupportedURL
        }
    }
}
