import FilmstripPlayer
import FilmstripStreaming
import FilmstripTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The player on streams Shaka Packager encrypted during the test (cenc and cbcs, HLS and DASH, video and audio
/// each encrypted), over the loopback server, on a test clock: with the key (given, or from a ClearKey licence
/// server) every frame is the source's; without it, or with the licence refused or late, `drm_failed` and no
/// picture.
@Suite("Player on protected streams", .serialized)
struct ProtectedPlaybackTests {
    static let keys = try! ContentKeys(pairs: ["\(ProtectedStreams.keyID):\(ProtectedStreams.key)"])

    static func serve(_ layout: ProtectedStreams.Layout, on server: LoopbackServer) throws -> URL {
        try StreamLayouts.serveDirectory(try ProtectedStreams.folder(), on: server, prefix: "/p")
        ClearKeyServer.serve(on: server, keys: [ProtectedStreams.keyID: ProtectedStreams.key])
        return server.url("/p/" + layout.rawValue)
    }

    /// Plays `configuration` to its end or an error; the recorder.
    static func play(
        _ configuration: PlayerConfiguration, network: NetworkConfiguration? = nil, until state: PlayerState.Kind
    ) async -> PlayerRecorder {
        let virtual = VirtualPlayer(network: network)
        let recorder = PlayerRecorder()
        recorder.observe(virtual.player)
        virtual.player.playbackRate = 2
        virtual.player.open(config: configuration)
        await recorder.wait(for: state, on: virtual)
        return recorder
    }

    @Test("with the key, or a licence, each frame is the source's", arguments: ProtectedStreams.Layout.allCases)
    func plays(_ layout: ProtectedStreams.Layout) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try Self.serve(layout, on: server)
        var given = PlayerConfiguration(with: url)
        given.contentKeys = Self.keys
        var licensed = PlayerConfiguration(with: url)
        licensed.licenseURL = server.url("/license")
        for (name, configuration) in [("keys", given), ("licence", licensed)] {
            let recorder = await Self.play(configuration, until: .ended)
            #expect(recorder.errors.isEmpty, "\(layout) \(name): \(recorder.errors)")
            let frames = recorder.frames
            #expect(frames.count >= 40, "\(layout) \(name): \(frames.count) frames")
            let wrong = frames.filter { time, number in
                number.map { abs($0 - Int((time * 25 + 1e-3).rounded(.down))) <= 1 } != true
            }
            #expect(wrong.isEmpty, "\(layout) \(name): \(wrong.count) wrong of \(frames.count): \(wrong.prefix(3))")
        }
        // The licence was asked once, for the key id, with the player's headers.
        let asked = server.requests.filter { $0.path == "/license" }
        #expect(asked.count == 1 && asked.allSatisfy { ClearKeyServer.askedKeyIDs($0) == [ProtectedStreams.keyID] })
    }

    @Test("without the key, with the licence refused or later than its timeout: drm_failed, no picture")
    func fails() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try Self.serve(.cbcsDASH, on: server)
        var licensed = PlayerConfiguration(with: url)
        licensed.licenseURL = server.url("/license")
        let cases: [(String, PlayerConfiguration, NetworkConfiguration?, LoopbackServer.Fault?)] = [
            ("no key", PlayerConfiguration(with: url), nil, nil),
            ("403", licensed, nil, .status(403)),
            ("late", licensed, NetworkConfiguration(timeoutIntervalForDrmAcquisitionMs: 1000), .delay(60)),
        ]
        for (name, configuration, network, fault) in cases {
            if let fault { server.fail("/license", with: [fault]) }
            let started = Date()
            let recorder = await Self.play(configuration, network: network, until: .error)
            // The licence's timeout is real time: the late one fails after it, not before.
            if name == "late" { #expect(Date().timeIntervalSince(started) >= 0.9) }
            #expect(
                recorder.errors.contains { $0.type == .drmFailed && $0.severity == .fatal },
                "\(name): \(recorder.errors)")
            #expect(recorder.frames.isEmpty, "\(name): \(recorder.frames.count) frames shown")
        }
    }

    @Test("the licence server a DASH manifest names (ClearKey Laurl) is asked when none is configured, signed")
    func manifestLicense() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        _ = try Self.serve(.cencDASH, on: server)
        let text = try String(contentsOf: ProtectedStreams.url(.cencDASH), encoding: .utf8)
        let named =
            #"<ContentProtection schemeIdUri="urn:uuid:e2719d58-a985-b3c9-781a-b030af78d30e" value="ClearKey1.0">"#
            + #"<clearkey:Laurl xmlns:clearkey="http://dashif.org/guidelines/clearKey" Lic_type="EME-1.0">"#
            + server.url("/license").absoluteString + "</clearkey:Laurl></ContentProtection>"
        let patched = try NSRegularExpression(pattern: "(<AdaptationSet[^>]*>)").stringByReplacingMatches(
            in: text, range: NSRange(text.startIndex..., in: text), withTemplate: "$1" + named)
        #expect(patched.contains("Laurl"))
        server.serve("/p/cenc/laurl.mpd", text: patched, contentType: "application/dash+xml")
        // The player's signing hook signs the licence request.
        let virtual = VirtualPlayer()
        let recorder = PlayerRecorder()
        recorder.observe(virtual.player)
        virtual.player.playbackRate = 2
        virtual.player.prepareLicenseRequest = { request in request.setValue("s1", forHTTPHeaderField: "X-Signature") }
        virtual.player.open(config: PlayerConfiguration(with: server.url("/p/cenc/laurl.mpd")))
        await recorder.wait(for: .ended, on: virtual)
        #expect(recorder.errors.isEmpty, "\(recorder.errors)")
        let wrong = recorder.frames.filter { time, number in
            number.map { abs($0 - Int((time * 25 + 1e-3).rounded(.down))) <= 1 } != true
        }
        #expect(recorder.frames.count >= 40 && wrong.isEmpty, "\(wrong.count) of \(recorder.frames.count) wrong")
        let asked = server.requests.filter { $0.path == "/license" }
        #expect(asked.count == 1 && asked.first?.headers["x-signature"] == "s1", "\(asked.map(\.headers))")
    }
}
