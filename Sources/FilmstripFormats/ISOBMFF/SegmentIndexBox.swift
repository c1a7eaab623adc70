public import Foundation

/// An ISO BMFF segment index (`sidx`, ISO/IEC 14496-12 8.16.3): the byte range and time span of every
/// subsegment of a single-file (on-demand) rendition.
///
/// ```swift
/// let index = try SegmentIndexBox.parse(indexBytes, offset: indexRange.lowerBound)
/// for entry in index.entries { print(entry.time, entry.duration, entry.byteRange) }
/// ```
public struct SegmentIndexBox: Sendable, Hashable {
    /// Units per second of the times.
    public var timescale: UInt32
    /// Earliest presentation time of the first subsegment, in `timescale` units.
    public var earliestPresentationTime: UInt64
    /// The subsegments in order.
    public var entries: [Entry]

    /// One subsegment.
    public struct Entry: Sendable, Hashable {
        /// Start, in `timescale` units.
        public var time: UInt64
        /// Length, in `timescale` units.
        public var duration: UInt32
        /// Its bytes in the file.
        public var byteRange: Range<Int64>
        /// Whether it starts with a stream access point (a keyframe).
        public var startsWithSAP: Bool
    }

    /// Why a `sidx` could not be read.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// A human-readable explanation.
        public var message: String
        /// The index is well formed but uses what Filmstrip does not read (a hierarchical index), rather than
        /// being damaged.
        public var isUnsupported = false
        /// `sidx: message`.
        public var description: String { "sidx: \(message)" }
    }

    /// Parses the first `sidx` box in `bytes`, which were read from file offset `offset` (subsegment byte ranges are
    /// relative to the end of the box). Boxes before it (such as `styp`) are skipped.
    public static func parse(_ bytes: some ContiguousBytes, offset: Int64) throws(ParseError) -> SegmentIndexBox {
        let result: Result<SegmentIndexBox, ParseError> = bytes.withUnsafeBytes { raw in
            Result { () throws(ParseError) in try parse(raw: raw, offset: offset) }
        }
        return try result.get()
    }

    private static func parse(raw: UnsafeRawBufferPointer, offset: Int64) throws(ParseError) -> SegmentIndexBox {
        guard offset >= 0, offset < 1 << 53 else { throw ParseError(message: "the offset \(offset) is out of range") }
        var reader = BoxReader(raw: raw)
        while true {
            let boxStart = reader.position
            guard reader.remaining >= 8 else { throw ParseError(message: "no sidx box in the index range") }
            var size = UInt64(try reader.u32())
            let type = try reader.u32()
            if size == 1 { size = try reader.u64() }
            if size == 0 { size = UInt64(raw.count - boxStart) }
            let headerLength = reader.position - boxStart
            guard size >= UInt64(headerLength), size <= UInt64(raw.count - boxStart) else {
                throw ParseError(message: "a box of \(size) bytes does not fit in the \(raw.count) bytes read")
            }
            guard type == 0x7369_6478 else {  // "sidx"
                reader.position = boxStart + Int(size)
                continue
            }
            let boxEnd = offset + Int64(boxStart) + Int64(size)
            let version = try reader.u8()
            reader.position += 3  // flags
            _ = try reader.u32()  // reference_ID
            let timescale = try reader.u32()
            guard timescale > 0 else { throw ParseError(message: "the timescale is 0") }
            let earliest = version == 0 ? UInt64(try reader.u32()) : try reader.u64()
            let firstOffset = version == 0 ? UInt64(try reader.u32()) : try reader.u64()
            reader.position += 2  // reserved
            let count = Int(try reader.u16())
            guard count * 12 <= reader.remaining else {
                throw ParseError(message: "\(count) references do not fit in the box")
            }
            var entries: [Entry] = []
            entries.reserveCapacity(count)
            var time = earliest
            // Offsets and times past 2^53 are not a file's or a stream's; refusing them keeps the sums exact.
            guard firstOffset < 1 << 53, earliest < 1 << 53 else {
                throw ParseError(message: "the first offset \(firstOffset) or time \(earliest) is out of range")
            }
            var position = boxEnd + Int64(firstOffset)
            for _ in 0..<count {
                let reference = try reader.u32()
                let duration = try reader.u32()
                let sap = try reader.u32()
                guard reference & 0x8000_0000 == 0 else {
                    throw ParseError(
                        message: "a hierarchical index (a sidx that references sidx boxes) is not supported",
                        isUnsupported: true)
                }
                let length = Int64(reference & 0x7FFF_FFFF)
                guard length > 0 else { throw ParseError(message: "a subsegment of 0 bytes") }
                entries.append(
                    Entry(
                        time: time, duration: duration, byteRange: position..<(position + length),
                        startsWithSAP: sap & 0x8000_0000 != 0))
                time += UInt64(duration)
                position += length
            }
            return SegmentIndexBox(timescale: timescale, earliestPresentationTime: earliest, entries: entries)
        }
    }
}

/// Big-endian reads with bounds checks.
struct BoxReader {
    let raw: UnsafeRawBufferPointer
    var position = 0

    var remaining: Int { raw.count - position }

    mutating func u8() throws(SegmentIndexBox.ParseError) -> UInt8 {
        guard remaining >= 1 else { throw .init(message: "the box is cut short") }
        defer { position += 1 }
        return raw[position]
    }

    mutating func u16() throws(SegmentIndexBox.ParseError) -> UInt16 {
        UInt16(try u8()) << 8 | UInt16(try u8())
    }

    mutating func u32() throws(SegmentIndexBox.ParseError) -> UInt32 {
        guard remaining >= 4 else { throw .init(message: "the box is cut short") }
        var value: UInt32 = 0
        for k in 0..<4 { value = value << 8 | UInt32(raw[position + k]) }
        position += 4
        return value
    }

    mutating func u64() throws(SegmentIndexBox.ParseError) -> UInt64 {
        UInt64(try u32()) << 32 | UInt64(try u32())
    }
}
