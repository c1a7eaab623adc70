import Foundation

extension MPDWalk {
    // MARK: Attribute values

    func duration(_ node: XMLNode, _ name: String) throws(DASHParseError) -> Double? {
        guard let text = node.attribute(name) else { return nil }
        guard let value = XSValues.duration(text), value >= 0 else {
            throw fail(.malformed, "'\(text)' is not a duration (such as PT10S)", node, attribute: name)
        }
        return value
    }

    func date(_ node: XMLNode, _ name: String) throws(DASHParseError) -> Date? {
        guard let text = node.attribute(name) else { return nil }
        guard let value = XSValues.dateTime(text) else {
            throw fail(.malformed, "'\(text)' is not a date and time", node, attribute: name)
        }
        return value
    }

    func integer(_ node: XMLNode, _ name: String) throws(DASHParseError) -> Int64? {
        guard let text = node.attribute(name) else { return nil }
        guard let value = Int64(text.trimmingCharacters(in: .whitespaces)) else {
            throw fail(.malformed, "'\(Self.excerpt(text))' is not an integer", node, attribute: name)
        }
        // Every count, time, number and offset is held to ±2^53 (see IntegerBounds), so later sums never trap.
        guard value.magnitude <= UInt64(IntegerBounds.maximum) else {
            throw fail(.malformed, "\(name) \(value) is beyond 2^53", node, attribute: name)
        }
        return value
    }

    /// At most 40 characters of an input value, for an error message.
    static func excerpt(_ text: String) -> String { text.count <= 40 ? text : text.prefix(40) + "…" }

    func unsigned(_ node: XMLNode, _ name: String) throws(DASHParseError) -> Int64? {
        guard let value = try integer(node, name) else { return nil }
        guard value >= 0 else {
            throw fail(.malformed, "\(name) must not be negative (got \(value))", node, attribute: name)
        }
        return value
    }

    /// A non-negative decimal (`duration` may be fractional in real MPDs).
    func positiveNumber(_ node: XMLNode, _ name: String) throws(DASHParseError) -> Double? {
        guard let text = node.attribute(name) else { return nil }
        guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite, value >= 0,
            value <= Double(IntegerBounds.maximum)
        else {
            throw fail(.malformed, "'\(Self.excerpt(text))' is not a number from 0 to 2^53", node, attribute: name)
        }
        return value
    }

    func byteRange(_ node: XMLNode, _ name: String) throws(DASHParseError) -> Range<Int64>? {
        guard let text = node.attribute(name) else { return nil }
        // "first-last", read from the bytes (a long SegmentList has one per segment).
        var first: Int64 = 0
        var last: Int64 = 0
        var sawDash = false
        var digits = (0, 0)
        for c in text.utf8 {
            if c == 0x2D, !sawDash {
                sawDash = true
            } else if c >= 0x30, c <= 0x39, (sawDash ? digits.1 : digits.0) < 18 {
                if sawDash {
                    last = last * 10 + Int64(c - 0x30)
                    digits.1 += 1
                } else {
                    first = first * 10 + Int64(c - 0x30)
                    digits.0 += 1
                }
            } else {
                digits = (0, 0)
                break
            }
        }
        guard sawDash, digits.0 > 0, digits.1 > 0, last >= first, last < IntegerBounds.maximum else {
            throw fail(
                .malformed, "'\(Self.excerpt(text))' is not a byte range (first-last, below 2^53)", node,
                attribute: name)
        }
        return first..<(last + 1)
    }

    func frameRate(_ node: XMLNode) throws(DASHParseError) -> Double? {
        guard let text = node.attribute("frameRate") else { return nil }
        let parts = text.split(separator: "/")
        if parts.count == 1, let value = Double(parts[0]), value > 0 { return value }
        if parts.count == 2, let n = Double(parts[0]), let d = Double(parts[1]), n > 0, d > 0 { return n / d }
        throw fail(.malformed, "'\(text)' is not a frame rate", node, attribute: "frameRate")
    }

    func resolvedBase(_ node: XMLNode, parent: URL) throws(DASHParseError) -> URL {
        guard let base = node.child("BaseURL") else { return parent }
        let text = base.text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return parent }
        guard let resolved = URL(string: text, relativeTo: parent)?.absoluteURL else {
            throw fail(.malformed, "'\(text)' is not a URL", base)
        }
        return resolved
    }
}
