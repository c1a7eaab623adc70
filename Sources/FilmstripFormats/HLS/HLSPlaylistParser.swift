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
    /// The most segments, or variants and renditions, a playlist may list: past it, parsing stops with a
    /// ``HLSParseError/Kind/tooLarge`` error before anything more is stored. Default 1,000,000.
    public var maximumEntries: Int

    /// Creates a parser.
    public init(maximumEntries: Int = 1_000_000) { self.maximumEntries = maximumEntries }

    /// Parses a playlist fetched from `url`.
    public func parse(_ bytes: some ContiguousBytes, url: URL) throws(HLSParseError) -> HLSPlaylist {
        let result: Result<HLSPlaylist, HLSParseError> = bytes.withUnsafeBytes { raw in
            var state = HLSParse(base: url, maximumEntries: maximumEntries)
            return Result { () throws(HLSParseError) in try state.run(raw) }
        }
        return try result.get()
    }
}

/// One parse: walks the lines once over the bytes, keeping the tags that apply to the next segment. The two lines
/// that make up almost all of a media playlist (`#EXTINF` and the segment URI) are handled without building
/// intermediate strings; other tags go through the general path.
struct HLSParse {
    let base: URL
    let maximumEntries: Int
    var master = HLSMasterPlaylist()
    var media = HLSMediaPlaylist()
    var isMaster = false
    var isMedia = false
    var lineNumber = 0
    /// The current line (trimmed), as bytes.
    var bytes = UnsafeRawBufferPointer(start: nil, count: 0)
    // State for the next segment or variant.
    var pendingDuration: Double?
    var pendingTitle: String?
    var pendingVariant: [String: String]?
    var pendingByteRange: (length: Int64, offset: Int64?)?
    var pendingDiscontinuity = false
    var pendingDate: Date?
    var pendingTiles: HLSTiles?
    var pendingGap = false
    var map: HLSMap?
    var key: HLSKey?
    var sampleEncryption: StreamProtection?
    var nextDate: Date?
    var lastRangeEnd: [String: Int64] = [:]
    var sawTargetDuration = false

    init(base: URL, maximumEntries: Int) {
        self.base = base
        self.maximumEntries = maximumEntries
    }

    /// Throws once a list is full.
    func ensureRoom(_ count: Int, _ what: String) throws(HLSParseError) {
        guard count < maximumEntries else {
            throw error(.tooLarge, "the playlist lists more than \(maximumEntries) \(what)")
        }
    }

    /// The current line as text.
    var line: String { String(decoding: bytes, as: UTF8.self) }

    func error(_ kind: HLSParseError.Kind, _ message: String) -> HLSParseError {
        HLSParseError(kind: kind, line: lineNumber, message: excerpted(message), snippet: String(line.prefix(240)))
    }

    mutating func run(_ raw: UnsafeRawBufferPointer) throws(HLSParseError) -> HLSPlaylist {
        guard let base = raw.baseAddress, raw.count > 0 else {
            lineNumber = 1
            throw error(.notAPlaylist, "the playlist is empty")
        }
        var offset = 0
        let count = raw.count
        if count >= 3, raw[0] == 0xEF, raw[1] == 0xBB, raw[2] == 0xBF { offset = 3 }
        media.segments.reserveCapacity(count / 48)
        var first = true
        while offset < count {
            // One line: up to LF, CR LF or CR.
            var end: Int
            if let newline = memchr(base + offset, 0x0A, count - offset) {
                end = base.distance(to: UnsafeRawPointer(newline))
            } else {
                end = count
            }
            var next = end + 1
            if let cr = memchr(base + offset, 0x0D, end - offset) {
                // A lone CR ends the line too; CR LF is one break.
                let at = base.distance(to: UnsafeRawPointer(cr))
                next = at + 1 < count && raw[at + 1] == 0x0A ? at + 2 : at + 1
                end = at
            }
            var start = offset
            offset = next
            while start < end, raw[start] == 0x20 || raw[start] == 0x09 { start += 1 }
            while end > start, raw[end - 1] == 0x20 || raw[end - 1] == 0x09 { end -= 1 }
            lineNumber += 1
            bytes = UnsafeRawBufferPointer(start: base + start, count: end - start)
            if first {
                first = false
                guard has("#EXTM3U"), bytes.count == 7 else {
                    throw error(.notAPlaylist, "an HLS playlist must start with #EXTM3U")
                }
                continue
            }
            guard let lead = bytes.first else { continue }
            if lead != 0x23 {  // not '#': a URI
                try uri()
            } else if has("#EXTINF:") {
                try extinf()
            } else if has("#EXT") {
                try tag()
            }  // else a comment
        }
        if first { throw error(.notAPlaylist, "the playlist is empty") }
        if isMaster { return .master(master) }
        if isMedia || media.endList {
            if !sawTargetDuration {
                // RFC 8216 requires it; players (and test vectors) get by without it: the longest segment, rounded up.
                media.targetDurationMissing = true
                media.targetDuration = (media.segments.map(\.duration).max() ?? 0).rounded(.up)
            }
            return .media(media)
        }
        throw error(.missing, "the playlist has neither variants nor segments")
    }

    /// Whether the current line starts with `prefix`.
    func has(_ prefix: StaticString) -> Bool {
        let n = prefix.utf8CodeUnitCount
        guard bytes.count >= n, let start = bytes.baseAddress else { return false }
        return memcmp(start, prefix.utf8Start, n) == 0
    }

    /// `#EXTINF:<duration>[,<title>]`, the duration read straight from the bytes.
    mutating func extinf() throws(HLSParseError) {
        try becomeMedia()
        var i = 8
        var whole = 0.0
        var digits = 0
        var simple = true
        while i < bytes.count {
            let c = bytes[i]
            if c >= 0x30, c <= 0x39 {
                whole = whole * 10 + Double(c - 0x30)
                digits += 1
            } else {
                break
            }
            i += 1
        }
        if i < bytes.count, bytes[i] == 0x2E {  // '.'
            i += 1
            var scale = 0.1
            while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 {
                whole += Double(bytes[i] - 0x30) * scale
                scale *= 0.1
                digits += 1
                i += 1
            }
        }
        if i < bytes.count, bytes[i] != 0x2C { simple = false }  // not ','
        var duration = whole
        if !simple || digits == 0 || digits > 15 {
            // Exponents, signs, long fractions: the general conversion (and its errors).
            let comma = bytes[8...].firstIndex(of: 0x2C) ?? bytes.count
            let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[8..<comma]), as: UTF8.self)
            guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value >= 0, value.isFinite else {
                throw error(.malformed, "EXTINF needs a duration in seconds")
            }
            duration = value
            i = comma
        }
        guard duration <= TimeBounds.maximumSeconds else {
            throw error(.malformed, "EXTINF \(duration) is longer than \(Int(TimeBounds.maximumSeconds)) s")
        }
        pendingDuration = duration
        pendingTitle =
            i + 1 < bytes.count
            ? String(decoding: UnsafeRawBufferPointer(rebasing: bytes[(i + 1)...]), as: UTF8.self) : nil
    }

    // MARK: Tags

    mutating func tag() throws(HLSParseError) {
        let colon = bytes.firstIndex(of: 0x3A)
        let name = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[..<(colon ?? bytes.count)]), as: UTF8.self)
        let value =
            colon.map { String(decoding: UnsafeRawBufferPointer(rebasing: bytes[($0 + 1)...]), as: UTF8.self) } ?? ""
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
            // RFC 8216 requires GROUP-ID and NAME too; players read renditions without them, and so does Filmstrip.
            guard let type = a["TYPE"] else { throw error(.missing, "EXT-X-MEDIA needs TYPE") }
            let group = a["GROUP-ID"] ?? ""
            let name = a["NAME"] ?? a["LANGUAGE"] ?? group
            try ensureRoom(master.renditions.count, "renditions")
            master.renditions.append(
                HLSRendition(
                    type: type, groupID: group, name: name, language: a["LANGUAGE"], isDefault: a["DEFAULT"] == "YES",
                    autoselect: a["AUTOSELECT"] == "YES", uri: try a["URI"].map(resolve), channels: a["CHANNELS"]))
        case "#EXT-X-I-FRAME-STREAM-INF", "#EXT-X-IMAGE-STREAM-INF":
            try becomeMaster()
            let a = try attributes(value)
            guard let uri = a["URI"] else { throw error(.missing, "\(name.dropFirst()) needs URI") }
            // BANDWIDTH is required by RFC 8216; image streams are published without it (0 then).
            let stream = HLSIFrameStream(
                uri: try resolve(uri),
                bandwidth: try a["BANDWIDTH"].map { text throws(HLSParseError) in
                    try integer(text, "BANDWIDTH")
                } ?? 0, codecs: a["CODECS"],
                resolution: try a["RESOLUTION"].map(resolution))
            if name == "#EXT-X-I-FRAME-STREAM-INF" {
                try ensureRoom(master.iFrameStreams.count, "I-frame streams")
                master.iFrameStreams.append(stream)
            } else {
                try ensureRoom(master.imageStreams.count, "image streams")
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
            throw error(.malformed, "EXTINF needs a duration in seconds")
        case "#EXT-X-BYTERANGE":
            pendingByteRange = try byteRange(value)
        case "#EXT-X-DISCONTINUITY":
            pendingDiscontinuity = true
        case "#EXT-X-GAP":
            pendingGap = true
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
                range = (offset ?? 0)..<(try rangeEnd(offset ?? 0, length))
            }
            map = HLSMap(uri: try resolve(uri), byteRange: range)
        case "#EXT-X-KEY":
            try keyTag(try attributes(value))
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
            try ensureRoom(master.variants.count, "variants")
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
        for byte in bytes where byte < 0x21 || byte == 0x7F {
            throw error(.malformed, "'\(line)' is not a valid URI")
        }
        let reference = line
        var range: Range<Int64>?
        if let (length, offset) = pendingByteRange {
            guard let start = offset ?? lastRangeEnd[reference] else {
                throw error(.missing, "EXT-X-BYTERANGE without an offset needs a previous range of the same resource")
            }
            let end = try rangeEnd(start, length)
            range = start..<end
            lastRangeEnd[reference] = end
        }
        if pendingDiscontinuity { nextDate = nil }
        let date = pendingDate ?? nextDate
        if let sampleEncryption {
            guard map != nil else {
                throw error(
                    .unsupported,
                    "SAMPLE-AES of MPEG-TS segments is not supported (Common Encryption of fMP4 segments, with "
                        + "EXT-X-MAP, is)")
            }
            media.sampleEncryption = sampleEncryption
        }
        let index = media.segments.count
        let discontinuities = media.segments.last.map { $0.discontinuitySequence } ?? media.discontinuitySequence
        try ensureRoom(media.segments.count, "segments")
        media.segments.append(
            HLSSegment(
                reference: reference, baseURL: base, duration: duration, title: pendingTitle,
                sequenceNumber: media.mediaSequence + index,
                discontinuitySequence: discontinuities + (pendingDiscontinuity && index > 0 ? 1 : 0),
                discontinuity: pendingDiscontinuity, byteRange: range, map: map, key: key, programDateTime: date,
                tiles: pendingTiles, gap: pendingGap))
        nextDate = date.map { $0.addingTimeInterval(duration) }
        pendingDuration = nil
        pendingTitle = nil
        pendingByteRange = nil
        pendingDiscontinuity = false
        pendingDate = nil
        pendingTiles = nil
        pendingGap = false
    }

    mutating func becomeMaster() throws(HLSParseError) {
        if isMedia { throw error(.malformed, "a playlist cannot have both variants and segments") }
        isMaster = true
    }

    mutating func becomeMedia() throws(HLSParseError) {
        if isMaster { throw error(.malformed, "a playlist cannot have both variants and segments") }
        isMedia = true
    }
}
