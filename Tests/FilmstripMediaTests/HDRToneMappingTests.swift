import Filmstrip
import FilmstripMedia
import FilmstripTesting
import Foundation
import Testing

/// HDR to SDR: PQ and HLG code values land where ITU-R BT.2100 and BT.2408 put them (reference white, 203 cd/m²,
/// just under SDR white), and a PQ version of the SDR pattern comes back close to the pattern. Shown without tone
/// mapping (code values read as BT.709), the PQ pattern measures 8 dB against the original (22 to 23 dB with it:
/// the rest is 4:2:0 chroma taken in another colour space and the highlight roll-off) and the grey levels below
/// miss by 16 to 103.
@Suite("HDR to SDR tone mapping")
struct HDRToneMappingTests {
    /// The SDR level of each band, read from the middle of the band.
    func levels(_ video: URL, bands: Int) async throws -> [Int] {
        let frame = try await FrameExtractor(url: video).image(at: 0)
        return (0..<bands).map { band in Int(frame.image.meanColor(x: band * 64 + 24, y: 24, width: 16, height: 16).1) }
    }

    @Test("HLG: 25 %, 50 % and 75 % signal on a 1000 cd/m² display (9.6, 51 and 203 cd/m²)")
    func hlgLevels() async throws {
        let video = try MediaFixtures.hdrGreys(transfer: "arib-std-b67", levels: [0.25, 0.5, 0.75])
        let measured = try await levels(video, bands: 3)
        for (value, expected) in zip(measured, [46, 124, 249]) {
            #expect(abs(value - expected) <= 4, "\(measured)")
        }
    }

    @Test("PQ: 100, 203 and 1000 cd/m²; reference white just under SDR white, the peak on white")
    func pqLevels() async throws {
        // The PQ code values of 100, 203 and 1000 cd/m².
        let video = try MediaFixtures.hdrGreys(transfer: "smpte2084", levels: [0.5081, 0.5807, 0.7518])
        let measured = try await levels(video, bands: 3)
        for (value, expected) in zip(measured, [179, 249, 255]) {
            #expect(abs(value - expected) <= 4, "\(measured)")
        }
    }

    @Test("frames of a PQ BT.2020 video match the SDR original")
    func pqFrames() async throws {
        let extractor = FrameExtractor(url: try MediaFixtures.hdrPattern(transfer: "smpte2084"))
        for t in [0.0, 4.0, 8.0] {
            let frame = try await extractor.image(at: t)
            #expect(frame.actualTime == t)
            let psnr = try ReferenceFrames.psnr(of: frame.image, against: try MediaFixtures.pattern(), at: t)
            #expect(psnr >= 21, "t=\(t): PSNR \(psnr) dB")
        }
    }

    @Test("generated thumbnails of a PQ BT.2020 video match the SDR original")
    func pqGenerated() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var options = PreviewTrackConfiguration()
        options.interval = 2
        options.width = 160
        let summary = try await PreviewTrackGenerator.generate(
            from: try MediaFixtures.hdrPattern(transfer: "smpte2084"), to: directory.url, options: options)
        var configuration = ThumbnailsConfiguration()
        configuration.cacheDirectory = nil
        let thumbnails = TrackThumbnails(configuration: configuration)
        try await thumbnails.load(webVTTTrack: summary.trackURL)
        for t in [0.0, 4.0, 8.0] {
            let thumbnail = try #require(thumbnails.getThumbnail(atTimestamp: t))
            let image = try ImageCodec.decode(thumbnail.imageData).0
            let psnr = try ReferenceFrames.psnr(of: image, against: try MediaFixtures.pattern(), at: t)
            #expect(psnr >= 21, "t=\(t): PSNR \(psnr) dB")
        }
    }
}
