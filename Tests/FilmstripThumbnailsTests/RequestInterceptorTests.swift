import Filmstrip
import FilmstripTesting
import Foundation
import Testing

@Suite("Request interceptor")
struct RequestInterceptorTests {
    /// Tokens handed out: "t1" first, "t2" after a refresh.
    final class Tokens: @unchecked Sendable {
        // Guarded by `lock`.
        private let lock = NSLock()
        private var refreshed = false
        private var _reasons: [InterceptionReason] = []
        var reasons: [InterceptionReason] { lock.withLock { _reasons } }
        func token(for reason: InterceptionReason) -> String {
            lock.withLock {
                _reasons.append(reason)
                if reason != .initial { refreshed = true }
                return refreshed ? "t2" : "t1"
            }
        }
    }

    @Test("every request is rewritten (signed URL and header); a 403 refreshes the token once and succeeds")
    func signedURLs() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        _ = try TrackFormatsTests.serveImagePlaylist(on: server)
        // The origin refuses the first request for the playlist and for sheet 1: their token has expired.
        server.fail("/hls/images.m3u8", with: [.status(403)])
        server.fail("/hls/sheet-1.jpg", with: [.status(401)])
        let tokens = Tokens()
        var configuration = ThumbnailsConfiguration()
        configuration.cacheDirectory = nil
        configuration.loading = LoadingConfiguration(retry: .none)
        configuration.requestInterceptor = { request, reason in
            var request = request
            let token = tokens.token(for: reason)
            request.url = URL(string: request.url.absoluteString + "?token=\(token)")!
            request.headers["Authorization"] = "Bearer \(token)"
            return request
        }
        let thumbnails = Filmstrip.shared.thumbnails(configuration: configuration)
        try await thumbnails.load(track: server.url("/hls/images.m3u8"))
        #expect(try await TrackFormatsTests.cell(thumbnails, at: 13) == 13)
        let requests = server.requests
        #expect(requests.allSatisfy { $0.query("token") != nil && $0.headers["authorization"] != nil })
        let playlist = requests.filter { $0.path == "/hls/images.m3u8" }
        #expect(playlist.map { $0.query("token") } == ["t1", "t2"])
        #expect(tokens.reasons.filter { $0 != .initial }.count == 2)  // the playlist and sheet 1, once each
        #expect(requests.filter { $0.path == "/hls/sheet-1.jpg" }.last?.headers["authorization"] == "Bearer t2")
    }

    @Test("a second refusal after the refresh is an error naming the status")
    func refusedTwice() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        _ = try TrackFormatsTests.serveImagePlaylist(on: server)
        server.fail("/hls/images.m3u8", with: [.status(403), .status(403)])
        var configuration = ThumbnailsConfiguration()
        configuration.cacheDirectory = nil
        configuration.requestInterceptor = { request, _ in request }
        let error = await thumbnailsError {
            try await TrackThumbnails(configuration: configuration).load(track: server.url("/hls/images.m3u8"))
        }
        #expect(
            error?.kind == .network && error?.description.contains("403") == true, "\(String(describing: error))")
        #expect(server.requestCount("/hls/images.m3u8") == 2)
    }
}
