public import Foundation

/// The boxes of an ISO BMFF byte run, one after another (ISO/IEC 14496-12, 4.2): each box's type and the range of
/// its payload. Sizes are read as hostile numbers: a 64-bit size, a size of 0 (to the end) and a size that runs past
/// the end are each checked, and a box that does not fit is an error, never a trap.
public struct ISOBoxes: Sendable, Hashable {
    /// One box.
    public struct Box: Sendable, Hashable {
        /// The four-character type (`moof`, `mdat`).
        public var type: String
        /// The box's bytes, header included.
        public var range: Range<Int>
        /// The payload's bytes (after the header).
        public var payload: Range<Int>
    }

    /// Why a run of boxes could not be read.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong.
        public var message: String

        public var description: String { message }
    }

    /// The boxes in order.
    public var boxes: [Box]

    /// Reads the boxes of `data[range]` (all of `data` by default); `range` is in `data`'s indices.
    public init(_ data: Data, in range: Range<Int>? = nil) throws(ParseError) {
        let range = range ?? data.startIndex..<data.endIndex
        guard range.lowerBound >= data.startIndex, range.upperBound <= data.endIndex else {
            throw ParseError(message: "the range \(range) is outside the data")
        }
        var boxes: [Box] = []
        var position = range.lowerBound
        while position < range.upperBound {
            guard range.upperBound - position >= 8 else {
                throw ParseError(message: "a box header at byte \(position) is cut short")
            }
            let small = Self.u32(data, position)
            let type = String(decoding: data[(position + 4)..<(position + 8)], as: UTF8.self)
            var header = 8
            var size: UInt64 = UInt64(small)
            if small == 1 {
                guard range.upperBound - position >= 16 else {
                    throw ParseError(message: "the 64-bit size of the \(type) box at byte \(position) is cut short")
                }
                size = UInt64(Self.u32(data, position + 8)) << 32 | UInt64(Self.u32(data, position + 12))
                header = 16
            } else if small == 0 {
                size = UInt64(range.upperBound - position)
            }
            guard size >= UInt64(header), size <= UInt64(range.upperBound - position) else {
                throw ParseError(
                    message: "the \(type) box at byte \(position) says \(size) bytes, "
                        + "where \(range.upperBound - position) remain")
            }
            let end = position + Int(size)
            boxes.append(Box(type: type, range: position..<end, payload: (position + header)..<end))
            position = end
        }
        self.boxes = boxes
    }

    /// The first box of `type`.
    public func first(_ type: String) -> Box? { boxes.first { $0.type == type } }

    /// The box at `path` (`["moov", "trak", "mdia"]`) inside `data`, read level by level; `nil` when a level lacks
    /// it. Full boxes on the path are not skipped: give container boxes only.
    public static func find(_ path: [String], in data: Data) throws(ParseError) -> Box? {
        var level = try ISOBoxes(data)
        var found: Box?
        for (index, type) in path.enumerated() {
            guard let box = level.first(type) else { return nil }
            found = box
            if index < path.count - 1 { level = try ISOBoxes(data, in: box.payload) }
        }
        return found
    }

    static func u32(_ data: Data, _ offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 << 8 | UInt32(data[offset + $1]) }
    }
}
