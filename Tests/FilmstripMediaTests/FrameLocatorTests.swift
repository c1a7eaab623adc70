import Filmstrip
import FilmstripFormats
import FilmstripTesting
import Foundation
import Testing

@testable import FilmstripMedia

@Suite("One frame locator: the keyframe choice and the picture geometry")
struct FrameLocatorTests {
    @Test("the keyframe at or before t answers within toleranceBefore; a nearer one after within toleranceAfter")
    func pick() {
        let any = KeyframeLocator()
        #expect(any.pick(at: 10, before: 8, after: 12) == .before)
        #expect(!any.looksAfter && !any.decodesExactly)
        // t before every keyframe: the first one, whatever the tolerance before.
        #expect(KeyframeLocator(toleranceBefore: 0.5).pick(at: 1, before: 2, after: nil) == .before)

        let near = KeyframeLocator(toleranceBefore: 1, toleranceAfter: 1)
        #expect(near.pick(at: 10, before: 9.5, after: 10.8) == .before)
        #expect(near.pick(at: 10, before: 9.1, after: 10.4) == .after)
        #expect(near.pick(at: 10, before: 8, after: 10.9) == .after)
        #expect(near.pick(at: 10, before: 8, after: 11.5) == nil)
        // A keyframe "after" that is before t (none follows it) is not one.
        #expect(near.pick(at: 10, before: 8, after: 8) == nil)
        // Equidistant: the one before.
        #expect(near.pick(at: 10, before: 9.5, after: 10.5) == .before)

        // Before rejected but nearer than an after within its tolerance: the after answers.
        let afterOnly = KeyframeLocator(toleranceBefore: 0, toleranceAfter: 2)
        #expect(afterOnly.pick(at: 10, before: 9.5, after: 11) == .after)
        #expect(afterOnly.pick(at: 10, before: 10, after: 11) == .before)

        let exact = KeyframeLocator(toleranceBefore: 0, toleranceAfter: 0)
        #expect(exact.decodesExactly)
        #expect(KeyframeLocator(FrameExtractorConfiguration.exact).decodesExactly)
    }

    @Test("geometry: sample aspect ratio, rotation, fitting, and the coded orientation when not turned")
    func geometry() {
        // 720x576 with 16:11 samples shows as 1047x576.
        let anamorphic = FrameGeometry(codedWidth: 720, codedHeight: 576, sampleAspect: (16, 11), quarterTurns: 0)
        #expect(anamorphic.displayWidth == 1047 && anamorphic.displayHeight == 576)
        #expect(anamorphic.outputSize(fittingIn: PixelSize(width: 320, height: 320)) == (320, 176))

        // A portrait phone video: 1920x1080 coded, turned once, shown 1080x1920.
        let portrait = FrameGeometry(codedWidth: 1920, codedHeight: 1080, sampleAspect: (0, 1), quarterTurns: 1)
        #expect(portrait.displaySize == (1080, 1920))
        #expect(portrait.outputSize(fittingIn: PixelSize(width: 180, height: 320)) == (180, 320))
        #expect(portrait.outputSize(fittingIn: PixelSize(width: 180, height: 320), turning: false) == (320, 180))
        #expect(FrameGeometry(codedWidth: 4, codedHeight: 2, sampleAspect: (1, 1), quarterTurns: -1).quarterTurns == 3)
        #expect(
            FrameGeometry(codedWidth: 0, codedHeight: 0, sampleAspect: (1, 1), quarterTurns: 0).displaySize == (1, 1))
    }
}

@Suite("Progressive reads at hostile offsets")
struct HostileOffsetTests {
    @Test("a read near Int64.max (a hostile container's seek) asks up to the end and gets nothing, without a trap")
    func nearInt64Max() throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.serve("/v.bin", body: Array(repeating: 7, count: 1000))
        let source = HTTPRangeSource(
            url: server.url("/v.bin"), transport: DefaultTransport.shared, configuration: LoadingConfiguration(),
            cancellation: CancellationFlag())
        source.seek(to: Int64.max - 10)
        var buffer = [UInt8](repeating: 0, count: 64)
        let read = try buffer.withUnsafeMutableBytes { try source.read(into: $0.baseAddress!, count: 64) }
        #expect(read == 0)
        #expect(server.requestCount("/v.bin") == 1)
    }

    @Test("while opening, a jump into the last 4 MiB reads to the end at once; after, it reads the read-ahead")
    func tailWhileOpening() throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let body = (0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        server.serve("/v.mp4", body: body)
        let source = HTTPRangeSource(
            url: server.url("/v.mp4"), transport: DefaultTransport.shared, configuration: LoadingConfiguration(),
            cancellation: CancellationFlag())
        var buffer = [UInt8](repeating: 0, count: 32_768)
        func read(at offset: Int64) throws -> Int {
            source.seek(to: offset)
            return try buffer.withUnsafeMutableBytes { try source.read(into: $0.baseAddress!, count: 32_768) }
        }
        _ = try read(at: 0)  // the head tells the size
        // An index of 300 KB at the end: one request takes it whole, and reading it through asks nothing more.
        _ = try read(at: 700_000)
        #expect(server.requestCount("/v.mp4") == 2)
        var last = 700_000
        for offset in stride(from: 700_000 + 32_768, to: 1_000_000, by: 32_768) {
            _ = try read(at: Int64(offset))
            last = offset
        }
        #expect(server.requestCount("/v.mp4") == 2)
        #expect(Array(buffer.prefix(4)) == Array(body[last..<(last + 4)]))
        // Open: a jump near the end reads the read-ahead only.
        source.opening = false
        _ = try read(at: 200_000)
        let before = server.bytesSent("/v.mp4")
        _ = try read(at: 500_000)
        #expect(server.bytesSent("/v.mp4") - before == HTTPRangeSource.minimumReadAhead)
    }

    @Test("an expected read (a keyframe sample the index places) is one request of exactly its bytes")
    func expectedRead() throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.serve("/v.mp4", body: Array(repeating: 1, count: 500_000))
        let source = HTTPRangeSource(
            url: server.url("/v.mp4"), transport: DefaultTransport.shared, configuration: LoadingConfiguration(),
            cancellation: CancellationFlag())
        source.opening = false
        source.expect(300_000..<312_345)
        source.seek(to: 300_000)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let read = try buffer.withUnsafeMutableBytes { try source.read(into: $0.baseAddress!, count: 65_536) }
        #expect(read == 12_345 && server.bytesSent("/v.mp4") == 12_345)
        // The hint is used once: the next jump reads the read-ahead again.
        source.seek(to: 100_000)
        _ = try buffer.withUnsafeMutableBytes { try source.read(into: $0.baseAddress!, count: 1024) }
        #expect(server.bytesSent("/v.mp4") == 12_345 + HTTPRangeSource.minimumReadAhead)
    }
}
