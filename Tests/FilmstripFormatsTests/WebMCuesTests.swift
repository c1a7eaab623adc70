import Foundation
import Testing

@testable import FilmstripFormats

@Suite("WebM Cues as a DASH segment index")
struct WebMCuesTests {
    /// An EBML element: its ID bytes, an 8-byte size, its data.
    static func element(_ id: [UInt8], _ data: [UInt8]) -> [UInt8] {
        var size: [UInt8] = [0x01]
        for shift in stride(from: 48, through: 0, by: -8) {
            size.append(UInt8(truncatingIfNeeded: data.count >> shift))
        }
        return id + size + data
    }

    static func unsigned(_ id: [UInt8], _ value: UInt64) -> [UInt8] {
        element(id, (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) })
    }

    /// An initialisation section: EBML header, a Segment of unknown size, Info with a TimecodeScale and a Duration.
    static func initialization(scale: UInt64 = 1_000_000, duration: Double = 6000) -> [UInt8] {
        let header = element([0x1A, 0x45, 0xDF, 0xA3], unsigned([0x42, 0x86], 1))
        let durationBytes = (0..<8).reversed().map { UInt8(truncatingIfNeeded: duration.bitPattern >> (8 * $0)) }
        let info = element(
            [0x15, 0x49, 0xA9, 0x66], unsigned([0x2A, 0xD7, 0xB1], scale) + element([0x44, 0x89], durationBytes))
        // Segment, size "unknown" (eight bytes of ones after the marker).
        return header + [0x18, 0x53, 0x80, 0x67, 0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF] + info
    }

    static func cues(_ points: [(time: UInt64, position: UInt64)]) -> [UInt8] {
        element(
            [0x1C, 0x53, 0xBB, 0x6B],
            points.flatMap { point in
                element(
                    [0xBB],
                    unsigned([0xB3], point.time)
                        + element([0xB7], unsigned([0xF7], 1) + unsigned([0xF1], point.position)))
            })
    }

    @Test("clusters from CuePoints: positions from the Segment's data, times by TimecodeScale, the last to the Cues")
    func clusters() throws {
        let head = Self.initialization()
        let dataOffset = Int64(Self.initialization().count - Self.element([0x15, 0x49, 0xA9, 0x66], []).count)
        let index = try WebMCues.parse(
            initialization: Data(head), cues: Data(Self.cues([(0, 100), (2000, 5000), (4000, 9000)])),
            cuesOffset: 20_000)
        #expect(index.timecodeScale == 1_000_000 && index.duration == 6)
        #expect(index.entries.map(\.time) == [0, 2, 4])
        let base = index.segmentDataOffset
        #expect(base > 0 && base <= dataOffset)
        #expect(
            index.entries.map(\.byteRange) == [
                (base + 100)..<(base + 5000), (base + 5000)..<(base + 9000),
                (base + 9000)..<20_000,
            ])
    }

    @Test("Cues before the clusters: the last cluster ends at the file's size, else after a bounded span")
    func cuesFirst() throws {
        let head = Data(Self.initialization())
        let cues = Data(Self.cues([(0, 500), (3000, 900)]))
        let sized = try WebMCues.parse(initialization: head, cues: cues, cuesOffset: 40, end: 5000)
        #expect(sized.entries.last?.byteRange.upperBound == 5000)
        let open = try WebMCues.parse(initialization: head, cues: cues, cuesOffset: 40, lastSpan: 1 << 20)
        #expect(open.entries.last?.byteRange.count == 1 << 20)
        #expect(throws: WebMCues.ParseError.self) {
            try WebMCues.parse(initialization: head, cues: cues, cuesOffset: 40)
        }
    }

    @Test("CuePoints that name one cluster (several keyframes in it, or a point per track) make one subsegment")
    func sharedCluster() throws {
        let index = try WebMCues.parse(
            initialization: Data(Self.initialization()), cues: Data(Self.cues([(2000, 900), (0, 10), (1000, 10)])),
            cuesOffset: 5000)
        #expect(index.entries.map(\.time) == [0, 2])
        #expect(index.entries.map(\.byteRange.count) == [890, Int(5000 - index.segmentDataOffset - 900)])
    }

    @Test("a Duration past any real length is dropped, not carried into segment times")
    func absurdDuration() throws {
        let index = try WebMCues.parse(
            initialization: Data(Self.initialization(scale: 1_000_000_000_000, duration: 1e300)),
            cues: Data(Self.cues([(0, 10)])), cuesOffset: 5000)
        #expect(index.duration == nil)
    }

    @Test("hostile indexes are errors, never traps")
    func hostile() {
        let head = Data(Self.initialization())
        let cases: [(String, Data, Data)] = [
            ("no Cues", head, Data([0x1A, 0x45, 0xDF, 0xA3, 0x80])),
            (
                "a size past the bytes", head,
                Data([0x1C, 0x53, 0xBB, 0x6B, 0x01, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
            ),
            ("a zero vint", head, Data([0x1C, 0x53, 0xBB, 0x6B, 0x00])),
            ("empty", head, Data()),
            ("a position at 2^63", head, Data(Self.cues([(0, 1 << 63)]))),
            ("a time at 2^64 - 1", head, Data(Self.cues([(UInt64.max, 10)]))),
            (
                "a nine-byte integer", head,
                Data(
                    Self.element(
                        [0x1C, 0x53, 0xBB, 0x6B],
                        Self.element([0xBB], Self.element([0xB3], Array(repeating: 1, count: 9)))))
            ),
            ("no EBML header", Data([0x18, 0x53, 0x80, 0x67, 0x80]), Data(Self.cues([(0, 10)]))),
            ("TimecodeScale 0", Data(Self.initialization(scale: 0)), Data(Self.cues([(0, 10)]))),
        ]
        for (name, initialization, cues) in cases {
            #expect(throws: WebMCues.ParseError.self, "\(name)") {
                try WebMCues.parse(initialization: initialization, cues: cues, cuesOffset: 1000)
            }
        }
    }
}
