import FilmstripMedia
import FilmstripStreaming
import FilmstripTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Common Encryption: cenc and cbcs over HLS and DASH, packaged by Shaka Packager")
struct ProtectedStreamTests {
    static let keys = try! ContentKeys(pairs: ["\(ProtectedStreams.keyID):\(ProtectedStreams.key)"])

    static func options(_ keys: ContentKeys, exact: Bool = true) -> FrameExtractorConfiguration {
        var options = exact ? FrameExtractorConfiguration.exact : FrameExtractorConfiguration()
        options.contentKeys = keys
        return options
    }

    @Test("with its key, each frame is the clear source's", arguments: ProtectedStreams.Layout.allCases)
    func decrypts(_ layout: ProtectedStreams.Layout) async throws {
        let protected = FrameExtractor(url: try ProtectedStreams.url(layout), options: Self.options(Self.keys))
        let clear = FrameExtractor(url: try ProtectedStreams.source(), options: .exact)
        for t in [0.5, 3.3, 7.96] {
            let shown = try await protected.image(at: t).image
            let source = try await clear.image(at: t).image
            #expect(frameNumber(shown) == Int(t * 25), "\(layout) t=\(t)")
            // Decrypted samples are the clear ones: the same picture (an infinite PSNR).
            let psnr = shown.psnr(against: source) ?? 0
            #expect(psnr >= 40, "\(layout) t=\(t): \(psnr) dB")
        }
        // The keyframe path (one key packet decoded on its own) decrypts too.
        let keyframe = FrameExtractor(
            url: try ProtectedStreams.url(layout), options: Self.options(Self.keys, exact: false))
        #expect(frameNumber(try await keyframe.image(at: 5.3).image) == 100)
    }

    @Test(
        "without its key, with a wrong key, or with another id's key: protectedContent, never a picture",
        arguments: ProtectedStreams.Layout.allCases)
    func refuses(_ layout: ProtectedStreams.Layout) async throws {
        let wrong = try ContentKeys(pairs: ["\(ProtectedStreams.keyID):ffeeddccbbaa99887766554433221100"])
        let other = try ContentKeys(pairs: ["ffffffffffffffffffffffffffffffff:\(ProtectedStreams.key)"])
        for (name, keys) in [("none", ContentKeys()), ("wrong", wrong), ("other", other)] {
            for exact in [true, false] {
                let extractor = FrameExtractor(
                    url: try ProtectedStreams.url(layout), options: Self.options(keys, exact: exact))
                let error = await mediaError { _ = try await extractor.image(at: 3.3) }
                #expect(
                    error?.kind == .protectedContent, "\(layout) \(name) exact=\(exact): \(String(describing: error))")
                if name != "wrong" {
                    #expect(error?.message.contains(ProtectedStreams.keyID) == true, "\(String(describing: error))")
                }
            }
        }
    }

    @Test("sample decryption refuses runs that do not fit the sample, and keys and IVs of the wrong size")
    func hostileRuns() throws {
        var bytes = [UInt8](repeating: 0, count: 64)
        let key = Data(repeating: 1, count: 16)
        try bytes.withUnsafeMutableBytes { sample in
            for (subsamples, iv, key) in [
                ([SampleDecryption.Subsample(clear: 60, protected: 16)], [UInt8](repeating: 0, count: 8), key),
                ([SampleDecryption.Subsample(clear: Int.max, protected: 1)], [UInt8](repeating: 0, count: 8), key),
                ([SampleDecryption.Subsample(clear: -1, protected: 1)], [UInt8](repeating: 0, count: 16), key),
                ([], [UInt8](repeating: 0, count: 7), key),
                ([], [UInt8](repeating: 0, count: 16), Data(count: 15)),
            ] {
                #expect(throws: SampleDecryption.Failure.self) {
                    try SampleDecryption.decrypt(sample, scheme: .cenc, key: key, iv: iv, subsamples: subsamples)
                }
            }
            // A run that fits: fine, for both schemes.
            for scheme in [SampleDecryption.Scheme.cenc, .cbcs] {
                try SampleDecryption.decrypt(
                    sample, scheme: scheme, key: key, iv: [UInt8](repeating: 0, count: 16),
                    subsamples: [.init(clear: 5, protected: 40)], pattern: (1, 9))
            }
        }
    }

    static func licensed(
        _ server: LoopbackServer, timeout: Double = 10,
        prepare: (@Sendable (inout URLRequest) async throws -> Void)? = nil
    ) -> FrameExtractorConfiguration {
        var options = FrameExtractorConfiguration.exact
        options.license = ClearKeyLicense(
            url: server.url("/license"), headers: ["Authorization": "Bearer viewer-1"], timeout: timeout,
            prepare: prepare)
        return options
    }

    @Test("a ClearKey licence server gives the key: asked once, with the key id, the headers and the signature")
    func license() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        ClearKeyServer.serve(on: server, keys: [ProtectedStreams.keyID: ProtectedStreams.key])
        let options = Self.licensed(server) { request in request.setValue("signed", forHTTPHeaderField: "X-Signature") }
        for layout in [ProtectedStreams.Layout.cbcsDASH, .cencHLS] {
            let extractor = FrameExtractor(url: try ProtectedStreams.url(layout), options: options)
            for t in [1.0, 6.3] {
                #expect(frameNumber(try await extractor.image(at: t).image) == Int(t * 25), "\(layout) t=\(t)")
            }
        }
        // One request per extractor (its key kept for every later segment), each naming the one key id.
        let asked = server.requests.filter { $0.path == "/license" }
        #expect(asked.count == 2)
        for request in asked {
            #expect(request.method == "POST" && ClearKeyServer.askedKeyIDs(request) == [ProtectedStreams.keyID])
            #expect(request.headers["authorization"] == "Bearer viewer-1" && request.headers["x-signature"] == "signed")
            #expect(request.headers["content-type"] == "application/json")
        }
    }

    @Test("a licence refused (403), malformed, without the key, or slower than its timeout: a typed error, no picture")
    func licenseFailures() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        ClearKeyServer.serve(on: server, keys: [ProtectedStreams.keyID: ProtectedStreams.key])
        let url = try ProtectedStreams.url(.cencDASH)
        server.fail("/license", with: [.status(403)])
        let refused = await mediaError {
            _ = try await FrameExtractor(url: url, options: Self.licensed(server)).image(at: 1)
        }
        #expect(
            refused?.kind == .protectedContent && refused?.message.contains("HTTP 403") == true,
            "\(String(describing: refused))")
        // A server that never answers: the timeout, not a hang.
        server.fail("/license", with: [.delay(60)])
        let started = Date()
        let hung = await mediaError {
            _ = try await FrameExtractor(url: url, options: Self.licensed(server, timeout: 1)).image(at: 1)
        }
        #expect(hung?.kind == .timedOut, "\(String(describing: hung))")
        #expect(Date().timeIntervalSince(started) < 30)
        // Slow but within the timeout: the picture.
        server.fail("/license", with: [.delay(0.3)])
        let slow = FrameExtractor(url: url, options: Self.licensed(server, timeout: 20))
        #expect(frameNumber(try await slow.image(at: 1).image) == 25)
        // A licence server that holds no key for the id, and one that answers something else.
        let empty = try LoopbackServer()
        defer { empty.stop() }
        ClearKeyServer.serve(on: empty, keys: [:])
        let missing = await mediaError {
            _ = try await FrameExtractor(url: url, options: Self.licensed(empty)).image(at: 1)
        }
        #expect(missing?.kind == .protectedContent && missing?.message.contains("no key") == true)
        empty.serve("/license", text: "<html>login</html>", contentType: "text/html")
        let malformed = await mediaError {
            _ = try await FrameExtractor(url: url, options: Self.licensed(empty)).image(at: 1)
        }
        #expect(malformed?.kind == .protectedContent && malformed?.message.contains("JSON Web Key") == true)
    }
}
