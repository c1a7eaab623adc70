import Foundation

// One entry point per parser, shared by the libFuzzer binary (`make fuzz`, compiled with FilmstripFormats' sources
// into one module under -D FILMSTRIP_FUZZ) and by the regression tests (`FuzzRegressionTests`).
#if !FILMSTRIP_FUZZ
    @testable import FilmstripFormats
#endif

/// A parser under fuzzing. ``run(_:)`` feeds it one input, exercises what it returns, and names any broken
/// invariant; a trap inside the parser is a crash the fuzzer keeps.
enum FuzzTarget: String, CaseIterable, Sendable {
    case webvtt, fragment, grid, hls, mpd, bif, sidx, storyboard, cmcd, cmcdRoundTrip = "cmcd-roundtrip"
    case iFrameImages = "iframe-images"
    case transportStream = "transport-stream"
    case codecString = "codec-string"

    static let trackURL = URL(string: "https://cdn.example.com/media/track.vtt")!
    static let manifestURL = URL(string: "https://cdn.example.com/media/main.m3u8")!
    static let mpdURL = URL(string: "https://cdn.example.com/media/main.mpd")!

    /// Runs one input; returns a description of a broken invariant, or `nil`.
    func run(_ data: Data) -> String? {
        switch self {
        case .webvtt: Self.webVTT(data)
        case .fragment: Self.fragment(data)
        case .grid: Self.grid(data)
        case .hls: Self.hls(data)
        case .mpd: Self.mpd(data)
        case .bif: Self.bif(data)
        case .sidx: Self.sidx(data)
        case .storyboard: Self.track((try? StoryboardParser().parse(data, url: Self.trackURL)))
        case .cmcd: Self.cmcd(data)
        case .cmcdRoundTrip: Self.cmcdRoundTrip(data)
        case .iFrameImages: Self.iFrameImages(data)
        case .transportStream: Self.transportStream(data)
        case .codecString: Self.codecString(data)
        }
    }

    // MARK: Targets

    private static func webVTT(_ data: Data) -> String? {
        for mode in [WebVTTThumbnailParser.Mode.strict, .lenient] {
            if let problem = track(try? WebVTTThumbnailParser(mode: mode).parse(data, trackURL: trackURL)) {
                return problem
            }
        }
        return nil
    }

    /// Cues point at images that exist, and lookups answer within the track.
    private static func track(_ track: ThumbnailTrack?) -> String? {
        guard let track else { return nil }
        for cue in track.cues {
            guard cue.imageIndex >= 0, Int(cue.imageIndex) < track.images.count else {
                return "cue at line \(cue.line) points at image \(cue.imageIndex) of \(track.images.count)"
            }
            _ = track.imageURL(of: cue)
        }
        for index in track.images.indices { _ = track.byteRange(ofImage: index) }
        let index = ThumbnailIndex(cues: track.cues)
        let probes = [-1, 0, 0.5, 1e9, .nan, .infinity] + track.cues.prefix(4).flatMap { [$0.start, $0.end] }
        for t in probes {
            for policy in ThumbnailLookupPolicy.allCases {
                if let found = index.lookup(t, policy: policy), !track.cues.indices.contains(found) {
                    return "lookup(\(t)) answered cue \(found) of \(track.cues.count)"
                }
            }
        }
        return nil
    }

    private static func fragment(_ data: Data) -> String? {
        let result = data.withUnsafeBytes { MediaFragment.parse($0) }
        if case .region(let region) = result, region.width <= 0 || region.height <= 0 {
            return "a region of \(region.width)x\(region.height) was accepted"
        }
        return nil
    }

    /// `template|columns|rows|durationMs|maxIndex|firstIndex|t`, fields as text.
    private static func grid(_ data: Data) -> String? {
        let fields = String(decoding: data, as: UTF8.self).split(separator: "|", omittingEmptySubsequences: false)
        func number(_ k: Int) -> Int { k < fields.count ? Int(fields[k]) ?? 1 : 1 }
        let template = fields.first.map(String.init) ?? ""
        _ = GridThumbnail.maxIndex(fromTemplate: template)
        guard let base = URL(string: template) else { return nil }
        let made: [GridThumbnail] = [
            try? GridThumbnail(
                baseUrl: URL(string: "https://cdn.example.com/")!, pathTemplate: template, gridHeight: number(2),
                gridWidth: number(1), durationMs: number(3), maxIndex: number(4), firstIndex: number(5)),
            try? GridThumbnail(
                baseUrl: base, gridHeight: number(2), gridWidth: number(1), durationMs: number(3),
                firstIndex: number(5)),
        ].compactMap { $0 }
        let t = fields.count > 6 ? Double(fields[6]) ?? 0 : 0
        for grid in made {
            _ = (grid.cellCount, grid.duration, grid.sheetURL(index: grid.firstIndex))
            for probe in [t, 0, -1, grid.duration, .nan, .infinity] {
                guard let cell = grid.cell(at: probe) else { continue }
                guard cell.number >= 0, cell.number < grid.cellCount, cell.column < grid.gridWidth,
                    cell.row < grid.gridHeight, cell.sheetIndex >= grid.firstIndex, cell.sheetIndex <= grid.maxIndex
                else { return "cell(at: \(probe)) is outside the grid: \(cell)" }
                _ = cell.rect(sheetWidth: 1920, sheetHeight: 1080, columns: grid.gridWidth, rows: grid.gridHeight)
            }
        }
        return nil
    }

    private static func hls(_ data: Data) -> String? {
        guard let playlist = try? HLSPlaylistParser().parse(data, url: manifestURL) else { return nil }
        let presentation = playlist.presentation(url: manifestURL)
        if case .media(let media) = playlist {
            let references = media.segmentReferences()
            guard references.count == media.segments.count else {
                return "\(media.segments.count) segments listed as \(references.count) references"
            }
            if let problem = track(media.thumbnailTrack(url: manifestURL)) { return problem }
        }
        return timeline(presentation)
    }

    private static func mpd(_ data: Data) -> String? {
        let parser = DASHManifestParser(limits: .init(maximumBytes: 1 << 20, maximumEntries: 20_000))
        guard let presentation = try? parser.parse(data, url: mpdURL) else { return nil }
        return timeline(presentation)
    }

    /// Every period's renditions list their segments (templates up to a bound), in order, with no negative length.
    private static func timeline(_ presentation: Presentation) -> String? {
        _ = presentation.periodIndex(containing: 1)
        for period in presentation.periods {
            for track in period.tracks {
                for rendition in track.renditions {
                    var references: [SegmentReference] = []
                    switch rendition.segments {
                    case .list(let listed): references = listed
                    case .template(let template):
                        let end = min(period.duration ?? 600, 600)
                        references = (try? template.references(to: end, completeOnly: false, limit: 2_000)) ?? []
                    case .segmentBase, .mediaPlaylist: break
                    }
                    for reference in references where !(reference.duration >= 0) {
                        return "a segment of \(reference.duration) s in rendition \(rendition.id)"
                    }
                }
            }
        }
        return nil
    }

    private static func bif(_ data: Data) -> String? {
        guard let track = try? BIFParser().parse(data, url: trackURL) else { return nil }
        for index in track.images.indices {
            guard let range = track.byteRange(ofImage: index), range.lowerBound >= 0,
                range.upperBound <= Int64(data.count)
            else { return "image \(index) is not inside the \(data.count) bytes" }
        }
        return self.track(track)
    }

    private static func sidx(_ data: Data) -> String? {
        guard let box = try? SegmentIndexBox.parse(data, offset: 1000) else { return nil }
        for entry in box.entries where entry.byteRange.isEmpty || entry.byteRange.lowerBound < 1000 {
            return "a subsegment at \(entry.byteRange)"
        }
        return nil
    }

    /// An I-frame image sequence's bytes (its init section, or one entry's fragment): every box lies inside the input
    /// and after the one before; a JPEG taken from a fragment is inside it.
    private static func iFrameImages(_ data: Data) -> String? {
        _ = ImageIFrameSequence.describesImages(initialization: data)
        if let boxes = try? ISOBoxes(data) {
            var end = 0
            for box in boxes.boxes {
                guard box.range.lowerBound == end, box.payload.upperBound == box.range.upperBound,
                    box.payload.lowerBound >= box.range.lowerBound + 8, box.range.upperBound <= data.count
                else { return "the \(box.type) box at \(box.range) does not follow \(end) inside \(data.count)" }
                end = box.range.upperBound
            }
        }
        if let image = try? ImageIFrameSequence.image(inFragment: data), image.count > data.count {
            return "a JPEG of \(image.count) bytes from \(data.count)"
        }
        return nil
    }

    /// MPEG-TS bytes (a segment's head): the scans stay inside the data and step whole packets, the tables are whole
    /// packets of it, and a later time never gives an earlier video start.
    private static func transportStream(_ data: Data) -> String? {
        let size = TransportStreamTables.packetSize
        _ = TransportStreamTables.isTransportStream(data)
        _ = TransportStreamTables.beginsWithTables(data)
        if let tables = TransportStreamTables.tables(in: data), tables.count % size != 0 || tables.count > data.count {
            return "tables of \(tables.count) bytes from \(data.count)"
        }
        for bytes in [data, data.dropFirst(size)] {
            var previous: (seconds: Double, start: Int?)?
            for seconds in [-1, 0, 0.5, 2, 60, 1e300] {
                let start = TransportStreamTables.videoStart(after: seconds, in: bytes)
                if let start, start % size != 0 || start < 0 || start + size > bytes.count {
                    return "a video start at \(start) of \(bytes.count) bytes"
                }
                if let previous, let start, (previous.start ?? Int.max) > start {
                    return "after \(seconds) s at \(start), before the start after \(previous.seconds) s"
                }
                previous = (seconds, start)
            }
            if TransportStreamTables.videoStart(after: .nan, in: bytes) != nil { return "a video start after NaN s" }
        }
        return nil
    }

    /// A decoder configuration (a record, or Annex B parameter sets): a string, when one comes out, is the sample
    /// entry, then dot-separated fields of letters and hexadecimal digits.
    private static func codecString(_ data: Data) -> String? {
        for codec in [VideoCodecString.Codec.h264, .hevc, .av1] {
            guard let text = VideoCodecString.make(codec, configuration: data) else { continue }
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            let field = { (part: Substring) in
                !part.isEmpty && part.allSatisfy { $0.isHexDigit || "ABCHLM".contains($0) }
            }
            guard ["avc1", "hvc1", "av01"].contains(parts[0]), parts.count >= 2, parts.dropFirst().allSatisfy(field)
            else { return "\(codec): \(text)" }
        }
        return nil
    }

    /// Text read from a request: when it decodes, encoding it again gives data that decodes the same.
    private static func cmcd(_ data: Data) -> String? {
        let text = String(decoding: data, as: UTF8.self)
        _ = try? CmcdDecoder.pairs(text)
        guard let decoded = try? CmcdDecoder.decode(text) else { return nil }
        let again = CmcdEncoder.encode(decoded)
        guard let second = try? CmcdDecoder.decode(again) else { return "'\(again)' does not decode" }
        guard CmcdEncoder.encode(second) == again else { return "'\(again)' changes when read back" }
        return nil
    }

    /// Data made from the input: what the encoder writes decodes, and encodes again to the same text, in every mode.
    private static func cmcdRoundTrip(_ data: Data) -> String? {
        var bytes = FuzzBytes(data)
        var cmcd = CmcdData(
            sessionID: bytes.string(), contentID: bytes.string(),
            streamingFormat: bytes.pick(CmcdData.StreamingFormat.allCases),
            streamType: bytes.pick(CmcdData.StreamType.allCases))
        cmcd.encodedBitrate = bytes.number()
        cmcd.objectDuration = bytes.number()
        cmcd.objectType = bytes.pick(CmcdData.ObjectType.allCases)
        cmcd.bufferLength = bytes.number()
        cmcd.measuredThroughput = bytes.number()
        cmcd.playbackRate = bytes.number()
        cmcd.nextObjectRequest = bytes.string()
        cmcd.nextRangeRequest = bytes.string()
        cmcd.startup = bytes.bool()
        cmcd.bufferStarvation = bytes.bool()
        cmcd.version = bytes.bool() ? Int(bytes.byte()) : nil
        for _ in 0..<Int(bytes.byte() % 3) {
            let key = bytes.string() ?? "x-key"
            switch bytes.byte() % 5 {
            case 0: cmcd.custom[key] = .string(bytes.string() ?? "")
            case 1: cmcd.custom[key] = .integer(Int(truncatingIfNeeded: bytes.word()))
            case 2: cmcd.custom[key] = .decimal(bytes.number() ?? 0)
            case 3: cmcd.custom[key] = .boolean(bytes.bool())
            default: cmcd.custom[key] = .token(bytes.string() ?? "")
            }
        }
        let text = CmcdEncoder.encode(cmcd)
        guard let decoded = try? CmcdDecoder.decode(text) else { return "'\(text)' does not decode" }
        guard CmcdEncoder.encode(decoded) == text else { return "'\(text)' changes when read back" }
        if let sid = decoded.sessionID, sid != cmcd.sessionID.map({ String($0.prefix(64)) }) {
            return "sid '\(cmcd.sessionID ?? "")' came back as '\(sid)'"
        }
        if let nor = decoded.nextObjectRequest, nor != cmcd.nextObjectRequest {
            return "nor '\(cmcd.nextObjectRequest ?? "")' came back as '\(nor)'"
        }
        let headers = CmcdEncoder.headers(cmcd)
        for value in headers.values where value.contains(where: { $0 == "\r" || $0 == "\n" }) {
            return "a header value holds CR or LF: \(value)"
        }
        guard let fromHeaders = try? CmcdDecoder.decode(headers: headers), CmcdEncoder.encode(fromHeaders) == text
        else { return "the headers \(headers) do not read back as '\(text)'" }
        let url = CmcdEncoder.url(URL(string: "https://cdn.example.com/a.m4s?x=1")!, adding: cmcd)
        guard
            text.isEmpty || (try? CmcdDecoder.decode(url: url)).flatMap({ $0 }).map({ CmcdEncoder.encode($0) }) == text
        else { return "the query of \(url) does not read back as '\(text)'" }
        return nil
    }
}

/// Values drawn from fuzz input, so the fuzzer steers structured data.
struct FuzzBytes {
    private var bytes: [UInt8]
    private var position = 0

    init(_ data: Data) { bytes = Array(data) }

    mutating func byte() -> UInt8 {
        defer { position += 1 }
        return position < bytes.count ? bytes[position] : 0
    }

    mutating func word() -> UInt64 { (0..<8).reduce(0) { value, _ in value << 8 | UInt64(byte()) } }

    mutating func bool() -> Bool { byte() & 1 == 1 }

    mutating func pick<T>(_ values: [T]) -> T? {
        let k = Int(byte())
        return k < values.count ? values[k] : nil
    }

    /// A number: small, large, fractional, negative, or not finite.
    mutating func number() -> Double? {
        switch byte() % 6 {
        case 0: nil
        case 1: Double(byte())
        case 2: Double(bitPattern: word())
        case 3: Double(Int16(truncatingIfNeeded: word())) / 7
        case 4: Double(word() % 100_000_000)
        default: [Double.nan, .infinity, -.infinity, 1e300, -0.0][Int(byte() % 5)]
        }
    }

    /// A string of up to 80 bytes taken from the input (any bytes, so quotes, escapes and controls appear).
    mutating func string() -> String? {
        let count = Int(byte() % 81)
        guard count > 0 else { return nil }
        let end = min(bytes.count, position + count)
        defer { position = max(position, end) }
        return position < end ? String(decoding: bytes[position..<end], as: UTF8.self) : ""
    }
}
