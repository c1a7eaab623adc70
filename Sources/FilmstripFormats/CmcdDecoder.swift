public import Foundation

/// Reads CMCD data (CTA-5004) as a server or a CDN log receives it: the `CMCD` query parameter or the four
/// `CMCD-*` headers.
///
/// ```swift
/// let data = try CmcdDecoder.decode(#"bl=21300,br=3200,d=4004,ot=v,sid="6e2fb550""#)
/// print(data.bufferLength, data.objectType)  // Optional(21300.0) Optional(.video)
/// ```
///
/// A field is `key`, `key=value` or `key=?0|?1`; a value is a quoted string (`\"` and `\\` escaped), a number or a
/// token. The standard keys must carry their type (`br` an integer, `ot` one of the object types, `sid` a string);
/// other keys land in ``CmcdData/custom``. A repeated key, an unterminated string, a character outside printable
/// ASCII, or a value of the wrong type is a ``DecodeError`` with its offset.
public enum CmcdDecoder {
    /// Why CMCD text could not be read.
    public struct DecodeError: Error, Sendable, Hashable, CustomStringConvertible {
        /// A human-readable explanation.
        public var message: String
        /// The offset in the text, in UTF-8 bytes.
        public var offset: Int
        /// `CMCD: message (at byte N)`.
        public var description: String { "CMCD: \(message) (at byte \(offset))" }
    }

    /// The fields in the order given.
    public static func pairs(_ text: String) throws(DecodeError) -> [(key: String, value: CmcdValue)] {
        try fields(text).map { ($0.key, $0.value) }
    }

    /// The fields with the offset of each key.
    private static func fields(_ text: String) throws(DecodeError) -> [(key: String, value: CmcdValue, offset: Int)] {
        let bytes = Array(text.utf8)
        var out: [(key: String, value: CmcdValue, offset: Int)] = []
        var seen: Set<String> = []
        var i = 0
        while i < bytes.count {
            while i < bytes.count, bytes[i] == UInt8(ascii: " ") { i += 1 }
            let keyStart = i
            while i < bytes.count, CmcdEncoder.isKeyByte(bytes[i]) { i += 1 }
            guard i > keyStart else { throw DecodeError(message: "a key is expected", offset: i) }
            let key = String(decoding: bytes[keyStart..<i], as: UTF8.self)
            guard seen.insert(key).inserted else {
                throw DecodeError(message: "'\(key)' is repeated", offset: keyStart)
            }
            var value = CmcdValue.boolean(true)
            if i < bytes.count, bytes[i] == UInt8(ascii: "=") {
                i += 1
                value = try readValue(bytes, &i)
            }
            out.append((key, value, keyStart))
            if i < bytes.count {
                guard bytes[i] == UInt8(ascii: ",") else { throw DecodeError(message: "',' is expected", offset: i) }
                i += 1
                guard i < bytes.count else { throw DecodeError(message: "a field is expected after ','", offset: i) }
            }
        }
        return out
    }

    /// The data of one CMCD string (the decoded `CMCD` query value, or one header's value).
    public static func decode(_ text: String) throws(DecodeError) -> CmcdData {
        var data = CmcdData()
        try apply(text, to: &data)
        return data
    }

    /// The data of a request's `CMCD-Object`, `CMCD-Request`, `CMCD-Session` and `CMCD-Status` headers (names
    /// compared without case; other headers ignored).
    public static func decode(headers: [String: String]) throws(DecodeError) -> CmcdData {
        var data = CmcdData()
        var seen: Set<String> = []
        for (name, value) in headers where name.lowercased().hasPrefix("cmcd-") {
            for (key, _) in try pairs(value) {
                guard seen.insert(key).inserted else {
                    throw DecodeError(message: "'\(key)' is in more than one header", offset: 0)
                }
            }
            try apply(value, to: &data)
        }
        return data
    }

    /// The data of a URL's `CMCD` query parameter; `nil` when it has none.
    public static func decode(url: URL) throws(DecodeError) -> CmcdData? {
        guard let items = URLComponents(url: url, resolvingAgainstBaseURL: true)?.queryItems,
            let item = items.first(where: { $0.name == "CMCD" })
        else { return nil }
        return try decode(item.value ?? "")
    }

    private static func apply(_ text: String, to data: inout CmcdData) throws(DecodeError) {
        for (key, value, offset) in try fields(text) {
            func number() throws(DecodeError) -> Double {
                switch value {
                case .integer(let n): return Double(n)
                case .decimal(let n): return n
                default: throw DecodeError(message: "'\(key)' must be a number", offset: offset)
                }
            }
            func integer() throws(DecodeError) -> Double {
                guard case .integer(let n) = value else {
                    throw DecodeError(message: "'\(key)' must be an integer", offset: offset)
                }
                return Double(n)
            }
            func string() throws(DecodeError) -> String {
                guard case .string(let text) = value else {
                    throw DecodeError(message: "'\(key)' must be a string", offset: offset)
                }
                return text
            }
            func flag() throws(DecodeError) -> Bool {
                guard case .boolean(let on) = value else {
                    throw DecodeError(message: "'\(key)' must be a boolean", offset: offset)
                }
                return on
            }
            func token<T: RawRepresentable<String>>(_: T.Type) throws(DecodeError) -> T {
                guard case .token(let text) = value, let parsed = T(rawValue: text) else {
                    throw DecodeError(message: "'\(key)' has an unknown value", offset: offset)
                }
                return parsed
            }
            switch key {
            case "br": data.encodedBitrate = try integer()
            case "d": data.objectDuration = try integer()
            case "ot": data.objectType = try token(CmcdData.ObjectType.self)
            case "tb": data.topBitrate = try integer()
            case "bl": data.bufferLength = try integer()
            case "dl": data.deadline = try integer()
            case "mtp": data.measuredThroughput = try integer()
            case "nor":
                let text = try string()
                data.nextObjectRequest = text.removingPercentEncoding ?? text
            case "nrr": data.nextRangeRequest = try string()
            case "su": data.startup = try flag()
            case "cid": data.contentID = try string()
            case "pr": data.playbackRate = try number()
            case "sf": data.streamingFormat = try token(CmcdData.StreamingFormat.self)
            case "sid": data.sessionID = try string()
            case "st": data.streamType = try token(CmcdData.StreamType.self)
            case "v":
                guard case .integer(let n) = value else {
                    throw DecodeError(message: "'v' must be an integer", offset: offset)
                }
                data.version = n
            case "bs": data.bufferStarvation = try flag()
            case "rtp": data.requestedMaximumThroughput = try integer()
            default: data.custom[key] = value
            }
        }
    }

    private static func readValue(_ bytes: [UInt8], _ i: inout Int) throws(DecodeError) -> CmcdValue {
        guard i < bytes.count else { throw DecodeError(message: "a value is expected after '='", offset: i) }
        let start = i
        switch bytes[i] {
        case UInt8(ascii: "\""):
            i += 1
            var text: [UInt8] = []
            while true {
                guard i < bytes.count else { throw DecodeError(message: "the string is not terminated", offset: start) }
                let byte = bytes[i]
                i += 1
                if byte == UInt8(ascii: "\"") { break }
                if byte == UInt8(ascii: "\\") {
                    guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") || bytes[i] == UInt8(ascii: "\\") else {
                        throw DecodeError(message: "only \\\" and \\\\ may be escaped", offset: i - 1)
                    }
                    text.append(bytes[i])
                    i += 1
                } else {
                    guard CmcdEncoder.isPrintable(byte) else {
                        throw DecodeError(message: "a string holds a byte outside printable ASCII", offset: i - 1)
                    }
                    text.append(byte)
                }
            }
            return .string(String(decoding: text, as: UTF8.self))
        case UInt8(ascii: "?"):
            guard i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "0") || bytes[i + 1] == UInt8(ascii: "1") else {
                throw DecodeError(message: "a boolean is ?0 or ?1", offset: i)
            }
            i += 2
            return .boolean(bytes[i - 1] == UInt8(ascii: "1"))
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            i += 1
            while i < bytes.count, isNumberByte(bytes[i]) { i += 1 }
            let text = String(decoding: bytes[start..<i], as: UTF8.self)
            if !text.contains("."), let n = Int(text) { return .integer(n) }
            guard text.contains("."), !text.hasSuffix("."), let n = Double(text), n.isFinite,
                text.split(separator: ".").last.map({ $0.count <= 3 }) == true
            else { throw DecodeError(message: "'\(text)' is not a CMCD number", offset: start) }
            return .decimal(n)
        default:
            while i < bytes.count, CmcdEncoder.isTokenByte(bytes[i], first: i == start) { i += 1 }
            guard i > start else { throw DecodeError(message: "a value is expected", offset: start) }
            return .token(String(decoding: bytes[start..<i], as: UTF8.self))
        }
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".")
    }
}
