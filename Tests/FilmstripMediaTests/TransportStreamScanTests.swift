import FilmstripFormats
import FilmstripStreaming
import FilmstripTesting
import Foundation
import Testing

@Suite("Where a TS segment's head may stop")
struct TransportStreamScanTests {
    /// A TS packet of `pid` that starts a PES of `streamID` with `pts` (90 kHz), padded with 0xFF.
    static func pesStart(pid: Int, streamID: UInt8, pts: Int64) -> [UInt8] {
        var packet: [UInt8] = [0x47, 0x40 | UInt8(pid >> 8), UInt8(pid & 0xFF), 0x10]
        let p = pts & 0x1_FFFF_FFFF
        packet += [0, 0, 1, streamID, 0, 0, 0x80, 0x80, 5]
        packet += [
            UInt8(0x21 | (p >> 29) & 0x0E), UInt8((p >> 22) & 0xFF), UInt8(0x01 | (p >> 14) & 0xFE),
            UInt8((p >> 7) & 0xFF), UInt8(0x01 | (p << 1) & 0xFE),
        ]
        return packet + [UInt8](repeating: 0xFF, count: 188 - packet.count)
    }

    @Test("the first video PES more than the given seconds after the first; audio and other PIDs are passed over")
    func videoStart() {
        var data: [UInt8] = []
        data += Self.pesStart(pid: 0x100, streamID: 0xE0, pts: 126_000)  // 1.4 s: the first
        data += Self.pesStart(pid: 0x101, streamID: 0xC0, pts: 900_000)  // audio, far later
        data += Self.pesStart(pid: 0x100, streamID: 0xE0, pts: 126_000 - 7_200)  // reordered: before the first
        data += Self.pesStart(pid: 0x100, streamID: 0xE0, pts: 126_000 + 45_000)  // +0.5 s
        data += Self.pesStart(pid: 0x100, streamID: 0xE0, pts: 126_000 + 90_000)  // +1.0 s
        let bytes = Data(data)
        #expect(TransportStreamTables.videoStart(after: 0.4, in: bytes) == 3 * 188)
        #expect(TransportStreamTables.videoStart(after: 0.5, in: bytes) == 4 * 188)
        #expect(TransportStreamTables.videoStart(after: 1.0, in: bytes) == nil)
        // Across the 33-bit wrap.
        let wrapped = Data(
            Self.pesStart(pid: 0x100, streamID: 0xE0, pts: 0x2_0000_0000 - 9_000)
                + Self.pesStart(pid: 0x100, streamID: 0xE0, pts: 81_000))
        #expect(TransportStreamTables.videoStart(after: 0.9, in: wrapped) == 188)
        #expect(TransportStreamTables.videoStart(after: 1.0, in: wrapped) == nil)
    }

    @Test("hostile bytes: no sync, cut packets, headers that run past their packet, random data")
    func hostile() {
        var generator = SystemRandomNumberGenerator()
        for size in [0, 1, 187, 188, 189, 4 * 188 + 7, 64 * 1024] {
            let random = Data((0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) })
            _ = TransportStreamTables.videoStart(after: 0, in: random)
            var synced = [UInt8](random)
            for k in stride(from: 0, to: synced.count, by: 188) { synced[k] = 0x47 }
            _ = TransportStreamTables.videoStart(after: 0, in: Data(synced))
        }
        // A PES start whose adaptation field fills the packet, and one cut inside its PTS.
        var full: [UInt8] = [0x47, 0x41, 0x00, 0x30, 183] + [UInt8](repeating: 0, count: 183)
        full += Array(Self.pesStart(pid: 0x100, streamID: 0xE0, pts: 1).prefix(12))
        #expect(TransportStreamTables.videoStart(after: 0, in: Data(full)) == nil)
        // A slice of a larger buffer (indices that do not start at 0): the offset counts from the slice's start.
        let buffer = Data(
            [0, 0, 0] + Self.pesStart(pid: 1, streamID: 0xE0, pts: 0)
                + Self.pesStart(
                    pid: 1, streamID: 0xE0, pts: 90_000))
        #expect(TransportStreamTables.videoStart(after: 0.5, in: buffer.dropFirst(3)) == 188)
    }
}
