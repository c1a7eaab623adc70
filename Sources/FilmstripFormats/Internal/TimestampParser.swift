/// Parses WebVTT timestamps, `[h+:]mm:ss.ttt`, from bytes, as the W3C parsing algorithm reads them.
enum TimestampParser {
    struct Failure: Error {
        /// Offset of the offending byte from the start of the line.
        var offset: Int
        var message: String
    }

    /// Parses a timestamp starting at `position` in `line`; on success advances `position` past it and returns
    /// milliseconds.
    static func parse(_ line: UnsafeRawBufferPointer, at position: inout Int) throws(Failure) -> Int64 {
        if let value = fastParse(line, at: &position) { return value }
        return try generalParse(line, at: &position)
    }

    /// The common layouts, `hh:mm:ss.ttt` and `mm:ss.ttt`, read in one pass; `nil` for anything else (including
    /// every error), which the general parser then handles and explains.
    @inline(__always)
    static func fastParse(_ line: UnsafeRawBufferPointer, at position: inout Int) -> Int64? {
        let remaining = line.count - position
        guard remaining >= 9, let base = line.baseAddress else { return nil }
        let p = base + position
        @inline(__always) func digit(_ i: Int) -> Int64? {
            let d = p.load(fromByteOffset: i, as: UInt8.self) &- 48
            return d < 10 ? Int64(d) : nil
        }
        @inline(__always) func byte(_ i: Int) -> UInt8 { p.load(fromByteOffset: i, as: UInt8.self) }
        var hours: Int64 = 0
        var offset = 0
        if remaining >= 12, byte(2) == 0x3A, byte(5) == 0x3A {
            guard let h1 = digit(0), let h2 = digit(1) else { return nil }
            hours = h1 * 10 + h2
            offset = 3
        }
        guard byte(offset + 2) == 0x3A, byte(offset + 5) == 0x2E,
            let m1 = digit(offset), let m2 = digit(offset + 1), let s1 = digit(offset + 3), let s2 = digit(offset + 4),
            let f1 = digit(offset + 6), let f2 = digit(offset + 7), let f3 = digit(offset + 8),
            m1 < 6, s1 < 6
        else { return nil }
        let end = offset + 9
        if end < remaining, byte(end) &- 48 < 10 { return nil }
        position += end
        return ((hours * 60 + m1 * 10 + m2) * 60 + s1 * 10 + s2) * 1000 + f1 * 100 + f2 * 10 + f3
    }

    static func generalParse(_ line: UnsafeRawBufferPointer, at position: inout Int) throws(Failure) -> Int64 {
        let start = position
        var p = position
        func digits(_ p: inout Int) -> (value: Int64, count: Int) {
            var value: Int64 = 0
            var count = 0
            while p < line.count, line[p] &- 48 < 10 {
                if count < 18 { value = value * 10 + Int64(line[p] &- 48) }
                count += 1
                p += 1
            }
            return (value, count)
        }
        let first = digits(&p)
        guard first.count > 0 else {
            throw Failure(offset: p, message: "expected a timestamp ([hh:]mm:ss.ttt)")
        }
        guard p < line.count, line[p] == UInt8(ascii: ":") else {
            throw Failure(offset: p, message: "expected ':' after the minutes of a timestamp")
        }
        p += 1
        let secondStart = p
        let second = digits(&p)
        var hours: Int64 = 0
        var minutes: (value: Int64, count: Int)
        var minutesOffset: Int
        var seconds: (value: Int64, count: Int)
        var secondsOffset: Int
        if p < line.count, line[p] == UInt8(ascii: ":") {
            // hh:mm:ss. Any number of hour digits: browsers (the W3C parsing algorithm) accept "0:00:00.000".
            guard first.count <= 9 else {
                throw Failure(offset: start, message: "hours value is too large")
            }
            hours = first.value
            minutes = second
            minutesOffset = secondStart
            p += 1
            secondsOffset = p
            seconds = digits(&p)
        } else {
            minutes = first
            minutesOffset = start
            seconds = second
            secondsOffset = secondStart
        }
        guard minutes.count == 2 else {
            throw Failure(offset: minutesOffset, message: "minutes must have exactly two digits")
        }
        guard minutes.value < 60 else {
            throw Failure(offset: minutesOffset, message: "minutes must be between 00 and 59")
        }
        guard seconds.count == 2 else {
            throw Failure(offset: secondsOffset, message: "seconds must have exactly two digits")
        }
        guard seconds.value < 60 else {
            throw Failure(offset: secondsOffset, message: "seconds must be between 00 and 59")
        }
        guard p < line.count, line[p] == UInt8(ascii: ".") else {
            let found = p < line.count ? "'\(Character(Unicode.Scalar(line[p])))'" : "the end of the line"
            throw Failure(offset: p, message: "expected '.' and three fraction digits, found \(found)")
        }
        p += 1
        let fractionOffset = p
        let fraction = digits(&p)
        guard fraction.count == 3 else {
            throw Failure(offset: fractionOffset, message: "the fraction must have exactly three digits")
        }
        position = p
        return ((hours * 60 + minutes.value) * 60 + seconds.value) * 1000 + fraction.value
    }
}
