/// Parses the fragment of an image reference (the text after `#`).
///
/// Understood forms: `xywh=x,y,w,h`, `xywh=pixel:x,y,w,h`, `xywh=percent:x,y,w,h` (W3C Media Fragments 1.0,
/// possibly among other `&`-separated dimensions such as `t=`), and the legacy `x,y,w,h`.
public enum MediaFragment {
    /// The outcome of parsing a fragment.
    public enum ParseResult: Sendable, Hashable {
        /// A valid spatial region.
        case region(SpatialRegion)
        /// The fragment holds no spatial dimension (for example only `t=10`); the whole image applies.
        case none
        /// The fragment tries to give a region but is malformed; the message says why.
        case invalid(String)
    }

    /// Parses a fragment given as text (without the leading `#`).
    public static func parse(_ fragment: String) -> ParseResult {
        var copy = fragment
        return copy.withUTF8 { parse(UnsafeRawBufferPointer($0)) }
    }

    /// Parses a fragment given as UTF-8 bytes (without the leading `#`).
    public static func parse(_ bytes: UnsafeRawBufferPointer) -> ParseResult {
        if bytes.isEmpty { return .none }
        // Legacy form: four comma-separated integers and nothing else.
        if let first = bytes.first, isDigit(first) {
            return parseFour(bytes, unit: .pixel, context: "legacy fragment")
        }
        var start = 0
        while start <= bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: "&") { end += 1 }
            let part = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
            if hasPrefix(part, "xywh=") {
                var value = UnsafeRawBufferPointer(rebasing: part[5...])
                var unit = SpatialRegion.Unit.pixel
                if hasPrefix(value, "pixel:") {
                    value = UnsafeRawBufferPointer(rebasing: value[6...])
                } else if hasPrefix(value, "percent:") {
                    value = UnsafeRawBufferPointer(rebasing: value[8...])
                    unit = .percent
                } else if let first = value.first, !isDigit(first) {
                    return .invalid("unknown xywh unit (expected pixel: or percent:)")
                }
                let result = parseFour(value, unit: unit, context: "xywh")
                if case .region(let region) = result, unit == .percent,
                    Int(region.x) > 100 || Int(region.y) > 100
                {
                    return .invalid("xywh percent origin is past 100%")
                }
                return result
            }
            start = end + 1
        }
        return .none
    }

    private static func parseFour(
        _ bytes: UnsafeRawBufferPointer, unit: SpatialRegion.Unit, context: StaticString
    )
        -> ParseResult
    {
        var values: (Int32, Int32, Int32, Int32) = (0, 0, 0, 0)
        var position = 0
        let count = bytes.count
        // Reads one non-negative integer; -1 when there is none, -2 when it overflows Int32.
        @inline(__always) func number() -> Int64 {
            var value: Int64 = 0
            let start = position
            while position < count {
                let d = bytes[position] &- 48
                guard d < 10 else { break }
                value = value * 10 + Int64(d)
                if value > Int64(Int32.max) { return -2 }
                position += 1
            }
            return position == start ? -1 : value
        }
        @inline(__always) func comma() -> Bool {
            guard position < count, bytes[position] == 0x2C else { return false }
            position += 1
            return true
        }
        let x = number()
        let ok1 = x >= 0 && comma()
        let y = ok1 ? number() : -1
        let ok2 = y >= 0 && comma()
        let w = ok2 ? number() : -1
        let ok3 = w >= 0 && comma()
        let h = ok3 ? number() : -1
        if x == -2 || y == -2 || w == -2 || h == -2 { return .invalid("\(context) value is too large") }
        guard h >= 0 else { return .invalid("\(context) needs four non-negative integers x,y,w,h") }
        guard position == count else { return .invalid("\(context) has trailing characters after x,y,w,h") }
        guard w > 0, h > 0 else { return .invalid("\(context) width and height must be greater than zero") }
        values = (Int32(x), Int32(y), Int32(w), Int32(h))
        return .region(SpatialRegion(unit: unit, x: values.0, y: values.1, width: values.2, height: values.3))
    }

    @inline(__always) static func isDigit(_ byte: UInt8) -> Bool { byte &- 48 < 10 }

    private static func hasPrefix(_ bytes: UnsafeRawBufferPointer, _ prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        let p = prefix.utf8Start
        for i in 0..<count where bytes[i] != p[i] { return false }
        return true
    }
}
