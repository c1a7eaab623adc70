import FilmstripFormats
import Foundation
import Testing

@Suite("RFC 6381 codec strings from decoder configurations")
struct VideoCodecStringTests {
    @Test("H.264: avcC and an Annex B sequence parameter set give avc1.PPCCLL")
    func h264() {
        let avcC = Data([0x01, 0x4D, 0x40, 0x1F, 0xFF, 0xE1])
        #expect(VideoCodecString.make(.h264, sampleEntry: "avc3", configuration: avcC) == "avc3.4d401f")
        #expect(VideoCodecString.make(.h264, sampleEntry: "mp4v", configuration: avcC) == "avc1.4d401f")
        // SPS then PPS, a four-byte start code first and a three-byte one between.
        let annexB = Data([0, 0, 0, 1, 0x67, 0x64, 0x00, 0x28, 0xAC, 0, 0, 1, 0x68, 0xEE, 0x3C, 0x80])
        #expect(VideoCodecString.make(.h264, configuration: annexB) == "avc1.640028")
        #expect(VideoCodecString.make(.h264, configuration: Data([0x01, 0x64])) == nil)
        #expect(VideoCodecString.make(.h264, configuration: Data([0, 0, 1, 0x68, 0xEE])) == nil, "no SPS")
    }

    @Test("HEVC: the example of ISO/IEC 14496-15 annex E, from hvcC and from an SPS with emulation prevention")
    func hevc() {
        // Main profile, compatible with Main (0x60000000 reversed: 6), Main tier, level 3.1 (93), constraints B0.
        let hvcC = Data([0x01, 0x01, 0x60, 0x00, 0x00, 0x00, 0xB0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x5D, 0xF0])
        #expect(VideoCodecString.make(.hevc, sampleEntry: "hvc1", configuration: hvcC) == "hvc1.1.6.L93.B0")
        #expect(VideoCodecString.make(.hevc, sampleEntry: "hev1", configuration: hvcC) == "hev1.1.6.L93.B0")
        // Main 10 in profile space 0, high tier, compatible with 2 only, level 153, no constraint flags: the PTL's
        // zero bytes carry emulation prevention (00 00 03) in the SPS.
        let sps: [UInt8] = [
            0x42, 0x01, 0x01, 0x22, 0x20, 0x00, 0x00, 0x03, 0x00, 0x00, 0x03, 0x00, 0x00, 0x03, 0x00, 0x00, 0x03, 0x00,
            0x99, 0xA0,
        ]
        let annexB = Data([0, 0, 0, 1, 0x40, 0x01, 0x0C, 0, 0, 0, 1] + sps)
        #expect(VideoCodecString.make(.hevc, configuration: annexB) == "hvc1.2.4.H153")
        #expect(VideoCodecString.make(.hevc, configuration: Data(hvcC.prefix(12))) == nil)
    }

    @Test("AV1: av1C gives av01.P.LLT.DD")
    func av1() {
        #expect(VideoCodecString.make(.av1, configuration: Data([0x81, 0x04, 0x0C, 0x00])) == "av01.0.04M.08")
        #expect(VideoCodecString.make(.av1, configuration: Data([0x81, 0x4D, 0xC0])) == "av01.2.13H.10")
        #expect(VideoCodecString.make(.av1, configuration: Data([0x81, 0x4D, 0xE0])) == "av01.2.13H.12")
        #expect(VideoCodecString.make(.av1, configuration: Data([0x81])) == nil)
    }
}
