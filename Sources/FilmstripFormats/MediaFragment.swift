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

    private static func parseFour(_ bytes: UnsafeRawBufferPointer, unit: SpatialRegion.Unit, context: String)
        -> ParseResult
    {
        var values: (Int32, Int32, Int32, Int32) = (0, 0, 0, 0)
        var index = 0
        var position = 0
        while index < 4 {
            var value: Int64 = 0
            var digits = 0
            while position < bytes.count, isDigit(bytes[position]) {
                value = value * 10 + Int64(bytes[position] &- 48)
                digits += 1
                position += 1
                if value > Int64(Int32.max) { return .invalid("\(context) value is too large") }
            }
            guard digits > 0 else {
                return .invalid("\(context) needs four non-negative integers x,y,w,h")
            }
            switch index {
            case 0: values.0 = Int32(value)
            case 1: values.1 = Int32(value)
            case 2: values.2 = Int32(value)
            default: values.3 = Int32(value)
            }
            index += 1
            if index < 4 {
                guard position < bytes.count, bytes[position] == UInt8(ascii: ",") else {
                    return .invalid("\(context) needs four non-negative integers x,y,w,h")
                }
                position += 1
            }
        }
        guard position == bytes.count else {
            return .invalid("\(context) has trailing characters after x,y,w,h")
        }
        guard values.2 > 0, values.3 > 0 else {
            return .invalid("\(context) width and height must be greater than zero")
        }
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
