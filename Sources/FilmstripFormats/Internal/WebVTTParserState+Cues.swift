import Foundation

/// Cue timings, image references and reporting.
extension WebVTTParserState {
    // MARK: Timing

    func parseTiming(_ line: SourceLine) throws(WebVTTParseError) -> (Int64, Int64) {
        let raw = UnsafeRawBufferPointer(rebasing: bytes[line.start..<line.end])
        var p = 0
        skipSpaces(raw, &p)
        let start: Int64
        let end: Int64
        do throws(TimestampParser.Failure) {
            start = try TimestampParser.parse(raw, at: &p)
        } catch {
            throw parseError(.invalidTimestamp, line, column: error.offset + 1, "start time: " + error.message)
        }
        skipSpaces(raw, &p)
        guard p + 3 <= raw.count, raw[p] == 0x2D, raw[p + 1] == 0x2D, raw[p + 2] == 0x3E else {
            throw parseError(.invalidTimingLine, line, column: p + 1, "expected '-->' after the start time")
        }
        p += 3
        skipSpaces(raw, &p)
        do throws(TimestampParser.Failure) {
            end = try TimestampParser.parse(raw, at: &p)
        } catch {
            throw parseError(.invalidTimestamp, line, column: error.offset + 1, "end time: " + error.message)
        }
        // What follows is the cue settings, with or without whitespace before them (as browsers read them); a
        // thumbnail track ignores them.
        return (start, end)
    }

    /// A line that starts with `d:` or `dd:` after optional whitespace.
    func looksLikeTiming(_ line: SourceLine) -> Bool {
        var p = line.start
        while p < line.end, bytes[p] == 0x20 || bytes[p] == 0x09 || bytes[p] == 0x0C { p += 1 }
        var digits = 0
        while p < line.end, bytes[p] &- 48 < 10 {
            digits += 1
            p += 1
        }
        return digits > 0 && p < line.end && bytes[p] == UInt8(ascii: ":")
    }

    /// WebVTT whitespace inside a line: space, tab and form feed (a vertical tab is not whitespace).
    func skipSpaces(_ raw: UnsafeRawBufferPointer, _ p: inout Int) {
        while p < raw.count, raw[p] == 0x20 || raw[p] == 0x09 || raw[p] == 0x0C { p += 1 }
    }

    /// Whether the line is exactly `keyword` followed by nothing but spaces and tabs.
    func isOnly(_ line: SourceLine, _ keyword: StaticString) -> Bool {
        guard hasKeyword(line, keyword) else { return false }
        var p = line.start + keyword.utf8CodeUnitCount
        while p < line.end, bytes[p] == 0x20 || bytes[p] == 0x09 { p += 1 }
        return p == line.end
    }

    // MARK: Image references

    /// Resolves the payload to an image index and region; `nil` when the cue was skipped (lenient mode).
    mutating func parseReference(_ line: SourceLine) throws(WebVTTParseError) -> (Int32, SpatialRegion?)? {
        var start = line.start
        var end = line.end
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        var hash = start
        while hash < end, bytes[hash] != 0x23 { hash += 1 }
        let pathCount = hash - start
        guard pathCount > 0 else {
            try report(
                .invalidImageReference, line, column: start - line.start + 1,
                "the image reference has no path before its fragment")
            return nil
        }
        var region: SpatialRegion?
        if hash < end {
            switch MediaFragment.parse(UnsafeRawBufferPointer(rebasing: bytes[(hash + 1)..<end])) {
            case .region(let value): region = value
            case .none: break
            case .invalid(let message):
                note(
                    diagnostic(
                        .invalidFragment, line, column: hash - line.start + 1,
                        "\(message); the whole image is used"))
            }
        }
        if let last = lastPath, last.count == pathCount,
            memcmp(bytes.baseAddress! + last.start, bytes.baseAddress! + start, pathCount) == 0
        {
            return (last.index, region)
        }
        let path = text(from: start, to: hash)
        let index: Int32
        if let known = imageIndexByPath[path] {
            index = known
        } else {
            switch resolve(path, line: line, column: start - line.start + 1) {
            case .failure(let problem):
                try fail(problem.diagnostic)
                return nil
            case .success(let url):
                index = Int32(images.count)
                images.append(url)
                imageIndexByPath[path] = index
            }
        }
        lastPath = (start, pathCount, index)
        return (index, region)
    }

    func resolve(_ path: String, line: SourceLine, column: Int) -> Result<URL, WebVTTParseError> {
        var candidate = URL(string: path, relativeTo: trackURL)
        if candidate == nil,
            let encoded = path.addingPercentEncoding(withAllowedCharacters: Self.referenceCharacters)
        {
            candidate = URL(string: encoded, relativeTo: trackURL)
        }
        guard let url = candidate?.absoluteURL, let scheme = url.scheme?.lowercased() else {
            return .failure(parseError(.invalidImageReference, line, column: column, "'\(path)' is not a valid URL"))
        }
        switch scheme {
        case "http", "https":
            return .success(url)
        case "file":
            guard trackIsLocal else {
                return .failure(
                    parseError(
                        .localReferenceFromRemoteTrack, line, column: column,
                        "a track loaded from \(trackURL.scheme ?? "the network") may not refer to the local file '\(path)'"
                    ))
            }
            return .success(url)
        default:
            return .failure(
                parseError(
                    .invalidImageReference, line, column: column,
                    "unsupported URL scheme '\(scheme)' (only http, https and, for local tracks, file)"))
        }
    }

    static let referenceCharacters: CharacterSet = {
        var set = CharacterSet.urlPathAllowed
        set.insert(charactersIn: "?=&:%")
        return set
    }()

    // MARK: Reporting

    func diagnostic(
        _ kind: WebVTTDiagnostic.Kind, _ line: SourceLine, column: Int, _ message: String
    )
        -> WebVTTDiagnostic
    {
        WebVTTDiagnostic(kind: kind, line: line.number, column: column, message: message, snippet: text(line))
    }

    func parseError(
        _ kind: WebVTTDiagnostic.Kind, _ line: SourceLine, column: Int, _ message: String
    )
        -> WebVTTParseError
    {
        WebVTTParseError(diagnostic(kind, line, column: column, message))
    }

    /// A malformed cue or block: thrown in strict mode, collected in lenient mode.
    mutating func report(
        _ kind: WebVTTDiagnostic.Kind, _ line: SourceLine, column: Int, _ message: String
    )
        throws(WebVTTParseError)
    {
        try fail(diagnostic(kind, line, column: column, message))
    }

    /// Keeps a diagnostic, up to ``maximumDiagnostics`` of them (a track of a million broken cues is reported by its
    /// first ten thousand).
    mutating func note(_ problem: WebVTTDiagnostic) {
        if diagnostics.count < Self.maximumDiagnostics { diagnostics.append(problem) }
    }

    static let maximumDiagnostics = 10_000

    mutating func fail(_ problem: WebVTTDiagnostic) throws(WebVTTParseError) {
        if mode == .strict { throw WebVTTParseError(problem) }
        note(problem)
    }
}
