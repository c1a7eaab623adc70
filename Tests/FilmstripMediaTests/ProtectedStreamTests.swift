import FilmstripMedia
import FilmstripStreaming
import FilmstripTesting
import Foundation
import Testing

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
}
