import Filmstrip
import FilmstripSync
import FilmstripTesting
import Foundation
import Testing

@Suite("SDK-level player settings")
struct SDKPlayerTests {
    @Test(
        "setPlaybackRateRange applies to new players (a negative bound allows reverse); clamping warnings reach onError"
    )
    func rateRanges() async throws {
        let sdk = Filmstrip()
        #expect(sdk.playbackRateRange(of: .filmstrip).lowerBound == 0)
        sdk.setPlaybackRateRange(of: .filmstrip, to: -1...1.5)
        #expect(sdk.playbackRateRange(of: .filmstrip) == -1...1.5)
        let seen = Mutex<[PlayerError]>([])
        sdk.onError = { error in seen.withLock { $0.append(error) } }
        let virtual = sdk.virtualPlayer()
        let player = virtual.player
        player.playbackRate = 3
        _ = await virtual.run { !(seen.withLock({ $0.isEmpty })) }
        #expect(player.playbackRate == 1.5)
        #expect(seen.withLock { $0.first?.type } == .playbackRateClamped)
    }

    @Test("SDK-wide network headers reach the player's requests; the player's configuration wins")
    func networkHeaders() async throws {
        let server = try LoopbackServer()
        server.serve("/v.mp4", body: Array(try Data(contentsOf: try MediaFixtures.shortCounter())))
        let sdk = Filmstrip()
        sdk.networkConfiguration = NetworkConfiguration(httpAdditionalHeaders: ["X-App": "sdk", "X-Shared": "sdk"])
        let virtual = sdk.virtualPlayer()
        let player = virtual.player
        let states = Mutex<[PlayerState.Kind]>([])
        player.onState = { _, state in states.withLock { $0.append(state.kind) } }
        var configuration = PlayerConfiguration(with: server.url("/v.mp4"))
        configuration.network = NetworkConfiguration(httpAdditionalHeaders: ["X-Shared": "player"])
        player.load(config: configuration)
        _ = await virtual.run { states.withLock { $0.contains(.ready) } }
        let request = try #require(server.requests.first { $0.target == "/v.mp4" })
        #expect(request.headers["x-app"] == "sdk")
        #expect(request.headers["x-shared"] == "player")
        player.stop()
    }

    @Test("a fatal error reaches both the player's and the SDK's handlers")
    func fatal() async throws {
        let sdk = Filmstrip()
        let seen = Mutex<[PlayerError.Severity]>([])
        sdk.onError = { error in seen.withLock { $0.append(error.severity) } }
        let virtual = sdk.virtualPlayer()
        let player = virtual.player
        player.open(config: PlayerConfiguration(with: URL(fileURLWithPath: "/nonexistent/x.mp4")))
        _ = await virtual.run { !(!seen.withLock({ $0.contains(.fatal) })) }
        #expect(seen.withLock { $0.contains(.fatal) })
        #expect(player.state.playerError?.type == .sourceUnavailable)
        _ = sdk.thumbnails(for: player)
    }

    @Test("thumbnails(for: player) is one engine per player: loaded through one call, found through a later one")
    func thumbnailsPerPlayer() async throws {
        let sdk = Filmstrip()
        var configuration = ThumbnailsConfiguration()
        configuration.cacheDirectory = nil
        sdk.thumbnailsConfiguration = configuration
        let player = sdk.player()
        let other = sdk.player()
        let first = sdk.thumbnails(for: player)
        #expect(sdk.thumbnails(for: player) === first)
        #expect(sdk.thumbnails(for: other) !== first)
        let track = try TemporaryDirectory()
        defer { track.remove() }
        try track.write(
            "sprite-1.jpg", try SpriteSheetFixture.encoded(columns: 2, rows: 1, cellWidth: 32, cellHeight: 18))
        let url = try track.write(
            "t.vtt",
            text: TrackFixture.sprites(
                count: 2, columns: 2, rows: 1, cellWidth: 32,
                cellHeight: 18))
        try await sdk.thumbnails(for: player).load(webVTTTrack: url)
        #expect(sdk.thumbnails(for: player).getThumbnail(atTimestamp: 1.5)?.timeStampStart == 1)
        #expect(sdk.thumbnails(for: other).getThumbnail(atTimestamp: 1.5) == nil)
        // An explicit configuration makes a new engine, the player's from then on.
        let replaced = sdk.thumbnails(for: player, configuration: configuration)
        #expect(replaced !== first && sdk.thumbnails(for: player) === replaced)
    }
}

@Suite("The player's network settings reach its thumbnails engines")
struct PlayerNetworkThumbnailsTests {
    /// A two-cue sprite track on `server`; the track's URL.
    static func serveTrack(on server: LoopbackServer) throws -> URL {
        server.serve(
            "/t/sprite-1.jpg", body: try SpriteSheetFixture.encoded(columns: 2, rows: 1, cellWidth: 32, cellHeight: 18),
            contentType: "image/jpeg")
        server.serve(
            "/t/t.vtt", text: TrackFixture.sprites(count: 2, columns: 2, rows: 1, cellWidth: 32, cellHeight: 18))
        return server.url("/t/t.vtt")
    }

    @Test("the .tracks engine sends the SDK's and the content's headers, and keeps the player's address policy")
    func tracksEngine() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try Self.serveTrack(on: server)
        let sdk = Filmstrip()
        var configuration = ThumbnailsConfiguration()
        configuration.cacheDirectory = nil
        sdk.thumbnailsConfiguration = configuration
        sdk.networkConfiguration = NetworkConfiguration(httpAdditionalHeaders: ["x-app": "a-1", "x-session": "sdk"])
        let player = sdk.player()
        defer { player.stop() }
        var content = PlayerConfiguration(with: server.url("/none.m3u8"))
        content.network = NetworkConfiguration(httpAdditionalHeaders: ["x-session": "s-42"])
        player.load(config: content)
        #expect(player.networkSettings.httpAdditionalHeaders == ["x-app": "a-1", "x-session": "s-42"])
        let engine = sdk.thumbnails(for: player)
        try await engine.load(webVTTTrack: url)
        _ = try #require(try await engine.thumbnail(at: 1.5))
        let requests = server.requests.filter { $0.path.hasPrefix("/t/") }
        #expect(Set(requests.map(\.path)) == ["/t/t.vtt", "/t/sprite-1.jpg"])
        #expect(
            requests.allSatisfy { $0.headers["x-session"] == "s-42" && $0.headers["x-app"] == "a-1" },
            "\(requests.map(\.headers))")

        // A player whose settings allow public addresses only: the loopback track is refused before any request.
        server.forgetRequests()
        let guarded = sdk.player()
        defer { guarded.stop() }
        var publicOnly = PlayerConfiguration(with: server.url("/none.m3u8"))
        publicOnly.network = NetworkConfiguration(addressPolicy: .publicOnly)
        guarded.load(config: publicOnly)
        await #expect(throws: ThumbnailsError.self) { try await sdk.thumbnails(for: guarded).load(webVTTTrack: url) }
        #expect(server.requests.filter { $0.path.hasPrefix("/t/") }.isEmpty)
    }
}
