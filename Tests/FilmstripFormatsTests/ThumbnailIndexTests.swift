import FilmstripFormats
import Testing

@Suite("Thumbnail index lookups")
struct ThumbnailIndexTests {
    // Cues: [0,10) [10,20) gap [30,40) [40,50)
    let index = ThumbnailIndex(starts: [0, 10, 30, 40], ends: [10, 20, 40, 50])

    @Test("containing: start inclusive, end exclusive, nothing in gaps or outside")
    func containing() {
        #expect(index.lookup(0) == 0)
        #expect(index.lookup(9.999) == 0)
        #expect(index.lookup(10) == 1)
        #expect(index.lookup(19.999) == 1)
        #expect(index.lookup(20) == nil)
        #expect(index.lookup(25) == nil)
        #expect(index.lookup(30) == 2)
        #expect(index.lookup(49.999) == 3)
        #expect(index.lookup(50) == nil)
        #expect(index.lookup(-1) == nil)
        #expect(index.lookup(.nan) == nil)
        #expect(index.lookup(.infinity) == nil)
    }

    @Test("nextCue: the first cue starting at or after t, clamped to the last")
    func nextCue() {
        #expect(index.lookup(-5, policy: .nextCue) == 0)
        #expect(index.lookup(0, policy: .nextCue) == 0)
        #expect(index.lookup(0.001, policy: .nextCue) == 1)
        #expect(index.lookup(10, policy: .nextCue) == 1)
        #expect(index.lookup(12, policy: .nextCue) == 2)
        #expect(index.lookup(25, policy: .nextCue) == 2)
        #expect(index.lookup(40.5, policy: .nextCue) == 3)
        #expect(index.lookup(1000, policy: .nextCue) == 3)
    }

    @Test("nearest: containing, else the closer neighbour (ties to the earlier)")
    func nearest() {
        #expect(index.lookup(15, policy: .nearest) == 1)
        #expect(index.lookup(21, policy: .nearest) == 1)
        #expect(index.lookup(25, policy: .nearest) == 1)
        #expect(index.lookup(29, policy: .nearest) == 2)
        #expect(index.lookup(-3, policy: .nearest) == 0)
        #expect(index.lookup(70, policy: .nearest) == 3)
    }

    @Test("a long cue that overlaps later ones is still found")
    func overlaps() {
        // [0,100) overlaps [10,20) and [30,40)
        let overlapping = ThumbnailIndex(starts: [0, 10, 30], ends: [100, 20, 40])
        #expect(overlapping.lookup(15) == 1)
        #expect(overlapping.lookup(25) == 0)
        #expect(overlapping.lookup(50) == 0)
        #expect(overlapping.lookup(100) == nil)
        #expect(overlapping.lookup(150, policy: .nearest) == 0)
    }

    @Test("an empty index finds nothing")
    func empty() {
        let empty = ThumbnailIndex(starts: [], ends: [])
        for policy in ThumbnailLookupPolicy.allCases { #expect(empty.lookup(1, policy: policy) == nil) }
    }

    @Test("10,800 one-second cues: every second maps to its cue")
    func large() {
        let starts = (0..<10_800).map(Double.init)
        let large = ThumbnailIndex(starts: starts, ends: starts.map { $0 + 1 })
        for k in stride(from: 0, to: 10_800, by: 7) {
            #expect(large.lookup(Double(k) + 0.5) == k)
        }
        #expect(large.lookup(10_800) == nil)
    }
}
