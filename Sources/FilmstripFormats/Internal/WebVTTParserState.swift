import Foundation

/// A line of the source: byte offsets of its content (terminator excluded) and its 1-based number.
struct SourceLine {
    var start: Int
    var end: Int
    var number: Int
    var isEmpty: Bool { start == end }
}

/// The mutable state of one parse. Everything refers to the source by offsets; strings are only made for
/// distinct image paths, identifiers and diagnostics.
struct WebVTTParserState {
    let bytes: UnsafeRawBufferPointer
    let trackURL: URL
    let trackIsLocal: Bool
    let mode: WebVTTThumbnailParser.Mode
    /// Files without CR (the common case) split lines with `memchr`.
    let hasCarriageReturns: Bool

    var position = 0
    var lineNumber = 0
    var pending: SourceLine?
    var block: [SourceLine] = []
    /// Index in `block` of the line holding `-->` (0 or 1), or -1.
    var timingIndex = -1
    var cues: [ThumbnailCue] = []
    var images: [URL] = []
    var imageIndexByPath: [String: Int32] = [:]
    var lastPath: (start: Int, count: Int, index: Int32)?
    var diagnostics: [WebVTTDiagnostic] = []
    /// With ``collectsTextCues``, the cues as a browser's track holds them, whatever their payload.
    var textCues: [WebVTTCue] = []
    /// Whether to read the file as a browser does (``WebVTTCue``s) instead of as a thumbnail track.
    var collectsTextCues = false

    let maximumCues: Int

    init(bytes: UnsafeRawBufferPointer, trackURL: URL, mode: WebVTTThumbnailParser.Mode, maximumCues: Int) {
        self.maximumCues = maximumCues
        self.bytes = bytes
        hasCarriageReturns = bytes.count > 0 && memchr(bytes.baseAddress!, 0x0D, bytes.count) != nil
        self.trackURL = trackURL
        self.trackIsLocal = trackURL.isFileURL
        self.mode = mode
        block.reserveCapacity(8)
        cues.reserveCapacity(min(maximumCues, max(16, bytes.count / 64)))
    }

    mutating func run() throws(WebVTTParseError) -> ThumbnailTrack {
        try parseHeader()
        while collectBlock() {
            try processBlock()
        }
        if !cues.isEmpty, !isSortedByStart(cues) {
            cues.sort { ($0.startMilliseconds, $0.line) < ($1.startMilliseconds, $1.line) }
        }
        return ThumbnailTrack(sourceURL: trackURL, cues: cues, images: images, diagnostics: diagnostics)
    }

    // MARK: Lines

    /// The next line, or `nil` at the end of the input. CRLF, LF and CR all end a line.
    mutating func nextLine() -> SourceLine? {
        if let line = pending {
            pending = nil
            return line
        }
        let count = bytes.count
        guard position < count else { return nil }
        let base = bytes.baseAddress!
        let start = position
        var p: Int
        if hasCarriageReturns {
            p = position
            while p < count {
                let byte = base.load(fromByteOffset: p, as: UInt8.self)
                if byte == 0x0A || byte == 0x0D { break }
                p += 1
            }
        } else if let newline = memchr(base + position, 0x0A, count - position) {
            p = base.distance(to: UnsafeRawPointer(newline))
        } else {
            p = count
        }
        lineNumber += 1
        let line = SourceLine(start: start, end: p, number: lineNumber)
        if p < count {
            p += (bytes[p] == 0x0D && p + 1 < count && bytes[p + 1] == 0x0A) ? 2 : 1
        }
        position = p
        return line
    }

    /// Whether the line holds `-->`. Searches for `>` (rare in image references) and looks behind it.
    func containsArrow(_ line: SourceLine) -> Bool {
        guard line.end - line.start >= 3 else { return false }
        let base = bytes.baseAddress!
        var from = line.start + 2
        while from < line.end,
            let found = memchr(base + from, 0x3E, line.end - from)
        {
            let p = base.distance(to: UnsafeRawPointer(found))
            if bytes[p - 1] == 0x2D, bytes[p - 2] == 0x2D { return true }
            from = p + 1
        }
        return false
    }

    func hasKeyword(_ line: SourceLine, _ keyword: StaticString) -> Bool {
        let count = keyword.utf8CodeUnitCount
        guard line.end - line.start >= count else { return false }
        let k = keyword.utf8Start
        for i in 0..<count where bytes[line.start + i] != k[i] { return false }
        if line.end - line.start == count { return true }
        let next = bytes[line.start + count]
        return next == 0x20 || next == 0x09
    }

    func text(_ line: SourceLine) -> String {
        let slice = UnsafeRawBufferPointer(rebasing: bytes[line.start..<min(line.end, line.start + 240)])
        return String(decoding: slice, as: UTF8.self)
    }

    func text(from start: Int, to end: Int) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
    }

    /// Text as a browser's parser keeps it: invalid UTF-8 and NUL characters become U+FFFD.
    func browserText(from start: Int, to end: Int) -> String {
        let slice = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
        guard memchr(slice.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, 0, slice.count) != nil else {
            return String(decoding: slice, as: UTF8.self)
        }
        return String(decoding: slice, as: UTF8.self).replacingOccurrences(of: "\u{0}", with: "\u{FFFD}")
    }

    // MARK: Header

    mutating func parseHeader() throws(WebVTTParseError) {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { position = 3 }
        guard let first = nextLine(), hasKeyword(first, "WEBVTT") else {
            throw WebVTTParseError(
                WebVTTDiagnostic(
                    kind: .missingHeader, line: 1, column: 1,
                    message: "a WebVTT file must start with 'WEBVTT' followed by a space, a tab or a line break",
                    snippet: text(SourceLine(start: 0, end: lineEnd(from: 0), number: 1))))
        }
        // Header lines run to the first blank line. A timing line there means the author forgot the blank line;
        // browsers read the cue all the same, so this is a diagnostic in both modes, not an error.
        while let line = nextLine() {
            if line.isEmpty { break }
            if containsArrow(line) {
                note(
                    diagnostic(
                        .unexpectedBlock, line, column: 1, "a cue should be separated from the header by a blank line"))
                pending = line
                break
            }
        }
    }

    func lineEnd(from start: Int) -> Int {
        var p = start
        while p < bytes.count, bytes[p] != 0x0A, bytes[p] != 0x0D { p += 1 }
        return p
    }

    // MARK: Blocks

    /// Collects the next block into `block`; returns false at the end of the input.
    ///
    /// As in the W3C parser, the timing line may be the first or second line of a block, and any other line that
    /// holds `-->` starts the next block even without a blank line before it.
    mutating func collectBlock() -> Bool {
        block.removeAll(keepingCapacity: true)
        timingIndex = -1
        var sawTiming = false
        while let line = nextLine() {
            if line.isEmpty {
                if block.isEmpty { continue }
                break
            }
            if containsArrow(line) {
                if !sawTiming, block.count < 2 {
                    sawTiming = true
                    timingIndex = block.count
                    block.append(line)
                    continue
                }
                // A `-->` line anywhere else (after the timing line, or as the third line of a block) ends this
                // block and is the first line of the next one.
                pending = line
                break
            }
            block.append(line)
        }
        return !block.isEmpty
    }

    mutating func processBlock() throws(WebVTTParseError) {
        let first = block[0]
        if timingIndex < 0 {
            if hasKeyword(first, "NOTE") { return }
            // As the W3C parser recognises them: a first line of just the keyword (and spaces or tabs), and more.
            if block.count >= 2, isOnly(first, "STYLE") || isOnly(first, "REGION") {
                if !(cues.isEmpty && textCues.isEmpty) {
                    try report(
                        .misplacedBlock, first, column: 1, "STYLE and REGION blocks must come before the first cue")
                }
                return
            }
            if looksLikeTiming(first) {
                // Probably a cue with a mistyped arrow: the timing parser says precisely where.
                do throws(WebVTTParseError) {
                    _ = try parseTiming(first)
                } catch {
                    try fail(error.diagnostic)
                    return
                }
            }
            try report(.unexpectedBlock, first, column: 1, "expected a cue timing line ('start --> end')")
            return
        }
        let timing = block[timingIndex]
        let range: (Int64, Int64)
        do throws(WebVTTParseError) {
            range = try parseTiming(timing)
        } catch {
            try fail(error.diagnostic)
            return
        }
        if range.1 <= range.0 {
            // Browsers keep such a cue (it is never shown); so does Filmstrip, with a diagnostic.
            note(diagnostic(.emptyTimeRange, timing, column: 1, "the cue ends at or before its start"))
        }
        if collectsTextCues {
            guard textCues.count < maximumCues else {
                throw WebVTTParseError(
                    diagnostic(.tooManyCues, timing, column: 1, "the track has more than \(maximumCues) cues"))
            }
            let payload = block[(timingIndex + 1)...]
            textCues.append(
                WebVTTCue(
                    id: timingIndex == 1 ? browserText(from: first.start, to: first.end) : "",
                    startMilliseconds: range.0, endMilliseconds: range.1,
                    text: payload.map { browserText(from: $0.start, to: $0.end) }.joined(separator: "\n"),
                    line: timing.number))
            return
        }
        guard timingIndex + 1 < block.count else {
            try report(
                .missingImageReference, timing, column: timing.end - timing.start + 1,
                "the cue has no image reference after its timing line")
            return
        }
        let payload = block[timingIndex + 1]
        if timingIndex + 2 < block.count {
            note(
                diagnostic(
                    .extraPayloadLines, block[timingIndex + 2], column: 1,
                    "a thumbnail cue has one payload line; further lines are ignored"))
        }
        guard let (imageIndex, region) = try parseReference(payload) else { return }
        let identifier: String? = timingIndex == 1 ? browserText(from: first.start, to: first.end) : nil
        guard cues.count < maximumCues else {
            // In both modes: a track past the bound is refused, not cut short.
            throw WebVTTParseError(
                diagnostic(.tooManyCues, timing, column: 1, "the track has more than \(maximumCues) cues"))
        }
        cues.append(
            ThumbnailCue(
                startMilliseconds: range.0, endMilliseconds: range.1, imageIndex: imageIndex, region: region,
                identifier: identifier, line: Int32(truncatingIfNeeded: timing.number)))
    }
}

private func isSortedByStart(_ cues: [ThumbnailCue]) -> Bool {
    var previous = Int64.min
    for cue in cues {
        if cue.startMilliseconds < previous { return false }
        previous = cue.startMilliseconds
    }
    return true
}
