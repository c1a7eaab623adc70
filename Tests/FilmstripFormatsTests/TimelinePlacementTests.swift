import Foundation
import Testing

@testable import FilmstripFormats

@Suite("Timeline placement")
struct TimelinePlacementTests {
    @Test("media time (DASH): the period's offset plus the decoder's origin, known before anything is decoded")
    func mediaTime() {
        var placement = TimelinePlacement(timing: .mediaTime(offset: 30), start: 42, origin: 1.5)
        #expect(placement.shift == 31.5)
        #expect(placement.mediaShift == 30)
        // The first decoded time does not move it.
        #expect(placement.place(earliest: 7) == 31.5)
        #expect(placement.shift == 31.5)
    }

    @Test("segment start (HLS): fixed by the run's first decoded time, which lands on the segment's start")
    func segmentStart() {
        var placement = TimelinePlacement(timing: .segmentStart, start: 20, origin: 1.5)
        #expect(placement.shift == nil)
        #expect(placement.mediaShift == nil)
        #expect(placement.place(earliest: 8.5) == 11.5)
        #expect(8.5 + (placement.shift ?? 0) == 20)
        // Later times keep the first placement.
        #expect(placement.place(earliest: 3) == 11.5)
        // Media timestamps as they are (decoder time + origin) take the origin back out.
        #expect(placement.mediaShift == 10)
    }

    @Test("a decoder that reports media time as it is (origin 0)")
    func zeroOrigin() {
        var dash = TimelinePlacement(timing: .mediaTime(offset: -2), start: 0)
        #expect(dash.place(earliest: 2) == -2)
        var hls = TimelinePlacement(timing: .segmentStart, start: 6)
        #expect(hls.place(earliest: 10.25) + 10.25 == 6)
        #expect(hls.mediaShift == hls.shift)
    }
}
