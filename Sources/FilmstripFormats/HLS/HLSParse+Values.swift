import Foundation

extension HLSParse {
    // MARK: Values

    func resolve(_ reference: String) throws(HLSParseError) -> URL {
        guard let url = URL(string: reference, relativeTo: base)?.absoluteURL else {
            throw error(.malformed, "'\(reference)' is not a valid URI")
        }
        return url
    }

    func integer(_ text: String?, _ name: String) throws(HLSParseError) -> Int {
        guard let text else { throw error(.missing, "\(name) is required") }
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)), value >= 0, value <= IntegerBounds.maximum
        else {
            throw error(
                .malformed, "\(name) must be an integer from 0 to 2^53 (got '\(Self.excerpt(text))')")
        }
        return value
    }

    /// At most 40 characters of an input value, for an error message.
    static func excerpt(_ text: String) -> String { text.count <= 40 ? text : text.prefix(40) + "…" }

    func decimal(_ text: String, _ name: String) throws(HLSParseError) -> Double {
        guard let value = Double(text), value.isFinite, value >= 0, value <= TimeBounds.maximumSeconds else {
            throw error(
                .malformed, "\(name) must be a number from 0 to \(Int(TimeBounds.maximumSeconds)) (got '\(text)')")
        }
        return value
    }

    func resolution(_ text: String) throws(HLSParseError) -> PixelSize {
        // Real packagers also write U+00D7 (×).
        let parts = text.lowercased().replacingOccurrences(of: "\u{D7}", with: "x").split(separator: "x")
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), (1...65_535).contains(w),
            (1...65_535).contains(h)
        else {
            throw error(.malformed, "'\(text)' is not a resolution (WxH, each 1 to 65535)")
        }
        return PixelSize(width: w, height: h)
    }

    func byteRange(_ text: String) throws(HLSParseError) -> (Int64, Int64?) {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let length = Int64(parts[0]), length > 0 else {
            throw error(.malformed, "'\(Self.excerpt(text))' is not a byte range (n[@o])")
        }
        guard length <= IntegerBounds.maximum else {
            throw error(.malformed, "the byte range length \(length) is beyond 2^53")
        }
        guard parts.count == 2 else { return (length, nil) }
        guard let offset = Int64(parts[1]), offset >= 0 else {
            throw error(.malformed, "'\(Self.excerpt(text))' is not a byte range (n[@o])")
        }
        _ = try rangeEnd(offset, length)
        return (length, offset)
    }

    /// Where a range starting at `offset` of `length` bytes ends; an error past 2^53 bytes.
    func rangeEnd(_ offset: Int64, _ length: Int64) throws(HLSParseError) -> Int64 {
        guard offset <= IntegerBounds.maximum - length else {
            throw error(.malformed, "a byte range ends beyond 2^53 (\(length)@\(offset))")
        }
        return offset + length
    }

    func hexIV(_ text: String) throws(HLSParseError) -> [UInt8] {
        let digits = text.hasPrefix("0x") || text.hasPrefix("0X") ? text.dropFirst(2) : Substring(text)
        guard digits.count == 32 else { throw error(.malformed, "the IV must be 128 bits of hex (0x + 32 digits)") }
        var bytes: [UInt8] = []
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2)
            guard let byte = UInt8(digits[index..<next], radix: 16) else {
                throw error(.malformed, "the IV is not hexadecimal")
            }
            bytes.append(byte)
            index = next
        }
        return bytes
    }

    /// An attribute list (`KEY=value,KEY="quoted, with commas"`), values unquoted.
    func attributes(_ text: String) throws(HLSParseError) -> [String: String] {
        var result: [String: String] = [:]
        let scalars = Array(text.unicodeScalars)
        var i = 0
        while i < scalars.count {
            var name = ""
            while i < scalars.count, scalars[i] != "=" {
                name.unicodeScalars.append(scalars[i])
                i += 1
            }
            guard i < scalars.count, !name.isEmpty else {
                throw error(.malformed, "an attribute list needs NAME=value pairs")
            }
            i += 1
            var value = ""
            if i < scalars.count, scalars[i] == "\"" {
                i += 1
                while i < scalars.count, scalars[i] != "\"" {
                    value.unicodeScalars.append(scalars[i])
                    i += 1
                }
                guard i < scalars.count else { throw error(.malformed, "an unterminated quoted string in \(name)") }
                i += 1
            } else {
                while i < scalars.count, scalars[i] != "," {
                    value.unicodeScalars.append(scalars[i])
                    i += 1
                }
            }
            result[name.trimmingCharacters(in: .whitespaces)] = value
            if i < scalars.count {
                guard scalars[i] == "," else { throw error(.malformed, "attributes must be separated by commas") }
                i += 1
            }
        }
        return result
    }

    /// An `EXT-X-PROGRAM-DATE-TIME` or `START-DATE` (ISO 8601 / RFC 3339), read by the bounded parser the MPD's
    /// dates use: Foundation's ISO 8601 formatter hands the text to ICU, which dies with SIGFPE on a date such as
    /// `NaN-01-01T1:0:1.000000000000000000000000000000000000010.00Z` (found by fuzzing).
    static func date(_ text: String) -> Date? { XSValues.dateTime(text) }
}
