public import Foundation

/// The segment index of a WebM (Matroska) file: its `Cues`, which a DASH `SegmentBase@indexRange` names for a WebM
/// Representation, where an MP4 one names a `sidx` (the WebM DASH profile).
///
/// Each `CuePoint` gives a time and the position of the cluster that starts there, relative to the first byte of
/// the `Segment` element's data. That offset and the `TimecodeScale` are read from the initialisation section (the
/// EBML header, the `Segment` header, `Info` and `Tracks`). A subsegment runs from its cluster to the next one; the
/// last one to the `Cues` when they follow the clusters, else to `end` (the resource's size) when it is known, else at
/// most `lastSpan` bytes on (a `Range` request past a resource's end is answered with what remains of it).
///
/// ```swift
/// let cues = try WebMCues.parse(initialization: head, cues: indexBytes, cuesOffset: indexRange.lowerBound)
/// for entry in cues.entries { print(entry.time, entry.byteRange) }
/// ```
/// Every size and number is read with checked arithmetic and bounded by the bytes given: a hostile file gets a
/// ``ParseError``, never a trap.
public struct WebMCues: Sendable, Hashable {
    /// Nanoseconds per timestamp unit (`TimecodeScale`, default 1,000,000).
    public var timecodeScale: UInt64
    /// The `Segment` element's data offset in the file.
    public var segmentDataOffset: Int64
    /// The file's duration from `Info`, seconds, when it gives one.
    public var duration: Double?
    /// The subsegments in order.
    public var entries: [Entry]

    /// One subsegment.
    public struct Entry: Sendable, Hashable {
        /// Start, seconds.
        public var time: Double
        /// Its bytes in the file.
        public var byteRange: Range<Int64>
    }

    /// Why the index could not be read.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// A human-readable explanation.
        public var message: String
        /// `WebM Cues: message`.
        public var description: String { "WebM Cues: \(message)" }
    }

    /// The EBML ID of `Cues`: an index range that starts with it is WebM, not a `sidx`.
    public static let cuesID: UInt32 = 0x1C53_BB6B

    /// Whether `bytes` start with a `Cues` element.
    public static func isCues(_ bytes: Data) -> Bool {
        bytes.count >= 4 && bytes.prefix(4).elementsEqual([0x1C, 0x53, 0xBB, 0x6B])
    }

    /// Reads the index: `initialization` from the file's first byte, `cues` from `cuesOffset`; when the `Cues` come
    /// before the clusters, the last subsegment ends at `end` (the resource's size) or, unknown, is given `lastSpan`
    /// bytes (the most a reader will take of it).
    public static func parse(
        initialization: Data, cues: Data, cuesOffset: Int64, end: Int64? = nil, lastSpan: Int64? = nil
    ) throws(ParseError) -> WebMCues {
        guard cuesOffset >= 0, cuesOffset < 1 << 53 else {
            throw ParseError(message: "the index offset \(cuesOffset) is out of range")
        }
        let head = try segmentHead(Array(initialization))
        var reader = EBMLReader(bytes: Array(cues))
        guard let cuesElement = try reader.element(), cuesElement.id == cuesID else {
            throw ParseError(message: "the index range does not start with a Cues element")
        }
        var points: [(time: UInt64, position: UInt64)] = []
        var inner = reader.reader(over: cuesElement)
        while let point = try inner.element() {
            guard point.id == 0xBB else { continue }  // CuePoint
            var fields = inner.reader(over: point)
            var time: UInt64?
            var position: UInt64?
            while let field = try fields.element() {
                if field.id == 0xB3 { time = try fields.unsigned(field) }  // CueTime
                guard field.id == 0xB7, position == nil else { continue }  // the first CueTrackPositions
                var track = fields.reader(over: field)
                while let value = try track.element() {
                    if value.id == 0xF1, position == nil { position = try track.unsigned(value) }  // CueClusterPosition
                }
            }
            guard let time, let position else { throw ParseError(message: "a CuePoint without time or position") }
            points.append((time, position))
        }
        guard !points.isEmpty else { throw ParseError(message: "the Cues list no CuePoint") }
        // Several CuePoints may name one cluster (a cluster of several keyframes, or a point per track): the cluster
        // starts at the earliest of their times.
        points.sort { ($0.position, $0.time) < ($1.position, $1.time) }
        points = points.enumerated().filter { k, point in k == 0 || points[k - 1].position != point.position }.map(\.1)
        let limit = UInt64(1) << 53
        var entries: [Entry] = []
        for (k, point) in points.enumerated() {
            guard point.position < limit, point.time < limit else {
                throw ParseError(
                    message: "a CuePoint's position or time \(max(point.position, point.time)) is past 2^53")
            }
            let start = head.dataOffset + Int64(point.position)
            let stop: Int64
            if k + 1 < points.count {
                stop = head.dataOffset + Int64(points[k + 1].position)
            } else if cuesOffset > start {
                stop = cuesOffset
            } else if let end, end > start {
                stop = end
            } else if let lastSpan, lastSpan > 0, start < (1 << 53) - lastSpan {
                stop = start + lastSpan
            } else {
                throw ParseError(
                    message: "the last cluster's end is unknown (the Cues come first, the size is not known)")
            }
            guard stop > start, stop < 1 << 53 else {
                throw ParseError(message: "cluster \(k + 1) has no bytes (\(start)..<\(stop))")
            }
            let seconds = Double(point.time) * Double(head.scale) / 1e9
            guard seconds.isFinite else { throw ParseError(message: "CueTime \(point.time) is out of range") }
            entries.append(Entry(time: seconds, byteRange: start..<stop))
        }
        let seconds = head.duration.map { $0 * Double(head.scale) / 1e9 }
        return WebMCues(
            timecodeScale: head.scale, segmentDataOffset: head.dataOffset,
            duration: seconds.flatMap { $0.isFinite && $0 < 1e9 ? $0 : nil }, entries: entries)
    }

    /// The `Segment` element's data offset, `TimecodeScale` and `Duration` from the initialisation section.
    private static func segmentHead(
        _ bytes: [UInt8]
    ) throws(ParseError) -> (
        dataOffset: Int64, scale: UInt64, duration: Double?
    ) {
        var reader = EBMLReader(bytes: bytes)
        guard let header = try reader.element(), header.id == 0x1A45_DFA3 else {
            throw ParseError(message: "the initialisation section does not start with an EBML header")
        }
        // The Segment's size may be unknown (live) or larger than what was read: only its header is needed.
        guard let segment = try reader.header(), segment.id == 0x1853_8067 else {
            throw ParseError(message: "no Segment element after the EBML header")
        }
        let dataOffset = Int64(segment.dataStart)
        var scale: UInt64 = 1_000_000
        var duration: Double?
        while let child = try reader.element(truncatedOK: true) {
            guard child.id == 0x1549_A966 else { continue }  // Info
            var info = reader.reader(over: child)
            while let field = try info.element() {
                if field.id == 0x2A_D7B1 { scale = try info.unsigned(field) }  // TimecodeScale
                if field.id == 0x4489 { duration = info.float(field) }  // Duration
            }
            break
        }
        guard scale > 0, scale <= 1_000_000_000_000 else {
            throw ParseError(message: "TimecodeScale \(scale) is out of range")
        }
        return (dataOffset, scale, duration.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil })
    }
}

/// Reads EBML elements (variable-length IDs and sizes) from bytes, never past them.
private struct EBMLReader {
    let bytes: [UInt8]
    var position = 0

    struct Element {
        var id: UInt32
        /// Where the data starts and ends in ``EBMLReader/bytes``.
        var data: Range<Int>
        var dataStart: Int { data.lowerBound }
    }

    /// The next element's ID and size (its data may run past the bytes); nil at the end.
    mutating func header() throws(WebMCues.ParseError) -> (id: UInt32, dataStart: Int, size: UInt64?)? {
        guard position < bytes.count else { return nil }
        let (id, idLength) = try vint(at: position, keepMarker: true, maximum: 4)
        let (size, sizeLength) = try vint(at: position + idLength, keepMarker: false, maximum: 8)
        position += idLength + sizeLength
        // All ones: unknown size.
        let unknown = size == (UInt64(1) << (7 * UInt64(sizeLength))) - 1
        return (UInt32(truncatingIfNeeded: id), position, unknown ? nil : size)
    }

    /// The next whole element; nil at the end. With `truncatedOK`, an element that runs past the bytes ends the read
    /// (nil) instead of being an error.
    mutating func element(truncatedOK: Bool = false) throws(WebMCues.ParseError) -> Element? {
        guard let (id, start, size) = try header() else { return nil }
        guard let size, size <= UInt64(bytes.count - start) else {
            if truncatedOK { return nil }
            throw WebMCues.ParseError(message: "an element of \(size.map(String.init) ?? "unknown") bytes does not fit")
        }
        position = start + Int(size)
        return Element(id: id, data: start..<position)
    }

    /// A reader over an element's data.
    func reader(over element: Element) -> EBMLReader { EBMLReader(bytes: Array(bytes[element.data])) }

    /// An unsigned integer element's value (at most 8 bytes).
    func unsigned(_ element: Element) throws(WebMCues.ParseError) -> UInt64 {
        guard element.data.count <= 8 else {
            throw WebMCues.ParseError(message: "an integer of \(element.data.count) bytes")
        }
        return bytes[element.data].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// A float element's value (4 or 8 bytes), nil otherwise.
    func float(_ element: Element) -> Double? {
        let raw = bytes[element.data].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        switch element.data.count {
        case 4: return Double(Float(bitPattern: UInt32(truncatingIfNeeded: raw)))
        case 8: return Double(bitPattern: raw)
        default: return nil
        }
    }

    /// A variable-length integer at `at`: its value and length.
    private func vint(at: Int, keepMarker: Bool, maximum: Int) throws(WebMCues.ParseError) -> (UInt64, Int) {
        guard at < bytes.count else { throw WebMCues.ParseError(message: "an element header is cut short") }
        let first = bytes[at]
        guard first != 0 else { throw WebMCues.ParseError(message: "a variable-length integer longer than 8 bytes") }
        let length = first.leadingZeroBitCount + 1
        guard length <= maximum, at + length <= bytes.count else {
            throw WebMCues.ParseError(message: "an element header is cut short or too long")
        }
        var value = UInt64(keepMarker ? first : first & (0xFF >> length))
        for k in 1..<length { value = value << 8 | UInt64(bytes[at + k]) }
        return (value, length)
    }
}
