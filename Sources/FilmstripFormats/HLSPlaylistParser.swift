public import Foundation

/// Parses HLS playlists (RFC 8216) from bytes: master and media playlists, with errors that carry line numbers.
///
/// Understood: `EXT-X-STREAM-INF`, `EXT-X-MEDIA`, `EXT-X-I-FRAME-STREAM-INF`, `EXT-X-IMAGE-STREAM-INF`,
/// `EXT-X-TARGETDURATION`, `EXT-X-MEDIA-SEQUENCE`, `EXT-X-DISCONTINUITY(-SEQUENCE)`, `EXT-X-BYTERANGE` (with implicit
/// offsets), `EXT-X-MAP`, `EXT-X-KEY` (`NONE` and `AES-128`; other methods are an ``HLSParseError/Kind/unsupported``
/// error), `EXT-X-PROGRAM-DATE-TIME`, `EXT-X-ENDLIST`, `EXT-X-PLAYLIST-TYPE`, `EXT-X-I-FRAMES-ONLY`,
/// `EXT-X-IMAGES-ONLY`, `EXT-X-TILES`. Unknown tags and comments are ignored. URIs resolve against the playlist URL.
///
/// ```swift
/// switch try HLSPlaylistParser().parse(data, url: playlistURL) {
/// case .master(let master): print(master.variants.map(\.bandwidth))
/// case .media(let media): print(media.segments.count, media.targetDuration, media.isLive)
/// }
/// ```
public struct HLSPlaylistParser: Sendable {
    /// Creates a parser.
    public init() {}

    /// Parses a playlist fetched from `url`.
    public func parse(_ bytes: some ContiguousBytes, url: URL) throws(HLSParseError) -> HLSPlaylist {
        let text: String = bytes.withUnsafeBytes { raw in
            var slice = UnsafeRawBufferPointer(rebasing: raw[...])
            if raw.count >= 3, raw[0] == 0xEF, raw[1] == 0xBB, raw[2] == 0xBF {
                slice = UnsafeRawBufferPointer(rebasing: raw[3...])
            }
            return String(decoding: slice, as: UTF8.self)
        }
        var state = HLSParse(base: url)
        return try state.run(text)
    }
}

/// One parse: walks the lines once, keeping the tags that apply to the next segment.
struct HLSParse {
    let base: URL
    var master = HLSMasterPlaylist()
    var media = HLSMediaPlaylist()
    var isMaster = false
    var isMedia = false
    var lineNumber = 0
    var line = ""
    // State for the next segment or variant.
    var pendingDuration: Double?
    var pendingTitle: String?
    var pendingVariant: [String: String]?
    var pendingByteRange: (length: Int64, offset: Int64?)?
    var pendingDiscontinuity = false
    var pendingDate: Date?
    var pendingTiles: HLSTiles?
    var map: HLSMap?
    var key: HLSKey?
    var nextDate: Date?
    var lastRangeEnd: [URL: Int64] = [:]
    var sawTargetDuration = false

    init(base: URL) { self.base = base }

    func error(_ kind: HLSParseError.Kind, _ message: String) -> HLSParseError {
        HLSParseError(kind: kind, line: lineNumber, message: message, snippet: String(line.prefix(240)))
    }

    mutating func run(_ text: String) throws(HLSParseError) -> HLSPlaylist {
        var first = true
        for raw in text.split(
            omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
        {
            lineNumber += 1
            line = raw.trimmingCharacters(in: .whitespaces)
            if first {
                first = false
                guard line == "#EXTM3U" else {
                    throw error(.notAPlaylist, "an HLS playlist must start with #EXTM3U")
                }
                continue
            }
            if line.isEmpty { continue }
            if line.hasPrefix("#EXT") {
                try tag()
            } else if line.hasPrefix("#") {
                continue  // a comment
            } else {
                try uri()
            }
        }
        if first { throw error(.notAPlaylist, "the playlist is empty") }
        if isMaster { return .master(master) }
        if isMedia || media.endList {
            guard sawTargetDuration else {
                lineNumber = 1
                line = "#EXTM3U"
                throw error(.missing, "a media playlist needs #EXT-X-TARGETDURATION")
            }
            return .media(media)
        }
        throw error(.missing, "the playlist has neither variants nor segments")
    }

    // MARK: Tags

    mutating func tag() throws(HLSParseError) {
        let colon = line.firstIndex(of: ":")
        let name = colon.map { String(line[..<$0]) } ?? line
        let value = colon.map { String(line[line.index(after: $0)...]) } ?? ""
        switch name {
        case "#EXT-X-VERSION":
            let version = try integer(value, "EXT-X-VERSION")
            master.version = version
            media.version = version
        case "#EXT-X-INDEPENDENT-SEGMENTS":
            master.independentSegments = true
        case "#EXT-X-STREAM-INF":
            try becomeMaster()
            pendingVariant = try attributes(value)
        case "#EXT-X-MEDIA":
            try becomeMaster()
            let a = try attributes(value)
            guard let type = a["TYPE"], let group = a["GROUP-ID"], let name = a["NAME"] else {
                throw error(.missing, "EXT-X-MEDIA needs TYPE, GROUP-ID and NAME")
            }
            master.renditions.append(
                HLSRendition(
                    type: type, groupID: group, name: name, language: a["LANGUAGE"], isDefault: a["DEFAULT"] == "YES",
                    autoselect: a["AUTOSELECT"] == "YES", uri: try a["URI"].map(resolve)))
        case "#EXT-X-I-FRAME-STREAM-INF", "#EXT-X-IMAGE-STREAM-INF":
            try becomeMaster()
            let a = try attributes(value)
            guard let uri = a["URI"] else { throw error(.missing, "\(name.dropFirst()) needs URI") }
            let stream = HLSIFrameStream(
                uri: try resolve(uri), bandwidth: try integer(a["BANDWIDTH"], "BANDWIDTH"), codecs: a["CODECS"],
                resolution: try a["RESOLUTION"].map(resolution))
            if name == "#EXT-X-I-FRAME-STREAM-INF" {
                master.iFrameStreams.append(stream)
            } else {
                master.imageStreams.append(stream)
            }
        case "#EXT-X-TARGETDURATION":
            try becomeMedia()
            media.targetDuration = Double(try integer(value, "EXT-X-TARGETDURATION"))
            sawTargetDuration = true
        case "#EXT-X-MEDIA-SEQUENCE":
            try becomeMedia()
            media.mediaSequence = try integer(value, "EXT-X-MEDIA-SEQUENCE")
        case "#EXT-X-DISCONTINUITY-SEQUENCE":
            try becomeMedia()
            media.discontinuitySequence = try integer(value, "EXT-X-DISCONTINUITY-SEQUENCE")
        case "#EXT-X-PLAYLIST-TYPE":
            guard value == "VOD" || value == "EVENT" else {
                throw error(.malformed, "EXT-X-PLAYLIST-TYPE must be VOD or EVENT")
            }
            media.playlistType = value
        case "#EXT-X-ENDLIST":
            media.endList = true
        case "#EXT-X-I-FRAMES-ONLY":
            media.iFramesOnly = true
        case "#EXT-X-IMAGES-ONLY":
            media.imagesOnly = true
        case "#EXTINF":
            try becomeMedia()
            let comma = value.firstIndex(of: ",")
            let number = comma.map { String(value[..<$0]) } ?? value
            guard let duration = Double(number), duration >= 0, duration.isFinite else {
                throw error(.malformed, "EXTINF needs a duration in seconds")
            }
            pendingDuration = duration
            let title = comma.map { String(value[value.index(after: $0)...]) }
            pendingTitle = title?.isEmpty == true ? nil : title
        case "#EXT-X-BYTERANGE":
            pendingByteRange = try byteRange(value)
        case "#EXT-X-DISCONTINUITY":
            pendingDiscontinuity = true
        case "#EXT-X-PROGRAM-DATE-TIME":
            guard let date = Self.date(value) else {
                throw error(.malformed, "EXT-X-PROGRAM-DATE-TIME needs an ISO 8601 date")
            }
            pendingDate = date
        case "#EXT-X-MAP":
            let a = try attributes(value)
            guard let uri = a["URI"] else { throw error(.missing, "EXT-X-MAP needs URI") }
            var range: Range<Int64>?
            if let text = a["BYTERANGE"] {
                let (length, offset) = try byteRange(text)
                range = (offset ?? 0)..<((offset ?? 0) + length)
            }
            map = HLSMap(uri: try resolve(uri), byteRange: range)
        case "#EXT-X-KEY":
            let a = try attributes(value)
            switch a["METHOD"] {
            case "NONE"?:
                key = nil
            case "AES-128"?:
                guard let uri = a["URI"] else { throw error(.missing, "EXT-X-KEY with METHOD=AES-128 needs URI") }
                key = HLSKey(method: "AES-128", uri: try resolve(uri), iv: try a["IV"].map(hexIV))
            case let method?:
                throw error(.unsupported, "the key method \(method) is not supported (only NONE and AES-128)")
            case nil:
                throw error(.missing, "EXT-X-KEY needs METHOD")
            }
        case "#EXT-X-TILES":
            let a = try attributes(value)
            guard let res = a["RESOLUTION"], let layout = a["LAYOUT"] else {
                throw error(.missing, "EXT-X-TILES needs RESOLUTION and LAYOUT")
            }
            let grid = try resolution(layout)
            pendingTiles = HLSTiles(
                resolution: try resolution(res), columns: grid.width, rows: grid.height,
                duration: try a["DURATION"].map { text throws(HLSParseError) in try decimal(text, "DURATION") })
        default:
            break  // unknown tags are ignored (RFC 8216, 4.1)
        }
    }

    mutating func uri() throws(HLSParseError) {
        if let attributes = pendingVariant {
            pendingVariant = nil
            master.variants.append(
                HLSVariant(
                    uri: try resolve(line), bandwidth: try integer(attributes["BANDWIDTH"], "BANDWIDTH"),
                    averageBandwidth: try attributes["AVERAGE-BANDWIDTH"].map { text throws(HLSParseError) in
                        try integer(text, "AVERAGE-BANDWIDTH")
                    },
                    codecs: attributes["CODECS"], resolution: try attributes["RESOLUTION"].map(resolution),
                    frameRate: try attributes["FRAME-RATE"].map { text throws(HLSParseError) in
                        try decimal(text, "FRAME-RATE")
                    },
                    audio: attributes["AUDIO"], video: attributes["VIDEO"], subtitles: attributes["SUBTITLES"]))
            return
        }
        guard let duration = pendingDuration else {
            throw error(
                .missing,
                isMaster ? "a variant URI needs #EXT-X-STREAM-INF before it" : "a segment URI needs #EXTINF before it")
        }
        let url = try resolve(line)
        var range: Range<Int64>?
        if let (length, offset) = pendingByteRange {
            guard let start = offset ?? lastRangeEnd[url] else {
                throw error(.missing, "EXT-X-BYTERANGE without an offset needs a previous range of the same resource")
            }
            range = start..<(start + length)
            lastRangeEnd[url] = start + length
        }
        if pendingDiscontinuity { nextDate = nil }
        let date = pendingDate ?? nextDate
        let index = media.segments.count
        let discontinuities = media.segments.last.map { $0.discontinuitySequence } ?? media.discontinuitySequence
        media.segments.append(
            HLSSegment(
                uri: url, duration: duration, title: pendingTitle, sequenceNumber: media.mediaSequence + index,
                discontinuitySequence: discontinuities + (pendingDiscontinuity && index > 0 ? 1 : 0),
                discontinuity: pendingDiscontinuity, byteRange: range, map: map, key: key, programDateTime: date,
                tiles: pendingTiles))
        nextDate = date.map { $0.addingTimeInterval(duration) }
        pendingDuration = nil
        pendingTitle = nil
        pendingByteRange = nil
        pendingDiscontinuity = false
        pendingDate = nil
        pendingTiles = nil
    }

    mutating func becomeMaster() throws(HLSParseError) {
        if isMedia { throw error(.malformed, "a playlist cannot have both variants and segments") }
        isMaster = true
    }

    mutating func becomeMedia() throws(HLSParseError) {
        if isMaster { throw error(.malformed, "a playlist cannot have both variants and segments") }
        isMedia = true
    }

    // MARK: Values

    func resolve(_ reference: String) throws(HLSParseError) -> URL {
        guard let url = URL(string: reference, relativeTo: base)?.absoluteURL else {
            throw error(.malformed, "'\(reference)' is not a valid URI")
        }
        return url
    }

    func integer(_ text: String?, _ name: String) throws(HLSParseError) -> Int {
        guard let text else { throw error(.missing, "\(name) is required") }
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)), value >= 0 else {
            throw error(.malformed, "\(name) must be a non-negative integer (got '\(text)')")
        }
        return value
    }

    func decimal(_ text: String, _ name: String) throws(HLSParseError) -> Double {
        guard let value = Double(text), value.isFinite, value >= 0 else {
            throw error(.malformed, "\(name) must be a non-negative number (got '\(text)')")
        }
        return value
    }

    func resolution(_ text: String) throws(HLSParseError) -> HLSResolution {
        let parts = text.lowercased().split(separator: "x")
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0 else {
            throw error(.malformed, "'\(text)' is not a resolution (WxH)")
        }
        return HLSResolution(width: w, height: h)
    }

    func byteRange(_ text: String) throws(HLSParseError) -> (Int64, Int64?) {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let length = Int64(parts[0]), length > 0 else {
            throw error(.malformed, "'\(text)' is not a byte range (n[@o])")
        }
        guard parts.count == 2 else { return (length, nil) }
        guard let offset = Int64(parts[1]), offset >= 0 else {
            throw error(.malformed, "'\(text)' is not a byte range (n[@o])")
        }
        return (length, offset)
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

    static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}
