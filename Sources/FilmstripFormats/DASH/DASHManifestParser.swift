public import Foundation

/// Parses MPEG-DASH manifests (MPDs) into a ``Presentation``.
///
/// Understood: `type` static and dynamic; `availabilityStartTime`, `publishTime`, `mediaPresentationDuration`,
/// `minimumUpdatePeriod`, `timeShiftBufferDepth`, `suggestedPresentationDelay`, `minBufferTime`; `UTCTiming`;
/// Periods with `start` and `duration`; `BaseURL` at every level, resolved in order; `SegmentTemplate` (with
/// `$RepresentationID$`, `$Number$`, `$Time$`, `$Bandwidth$`, `%0Nd` widths and `$$`; `startNumber`, `timescale`,
/// `duration`, `presentationTimeOffset`), `SegmentTimeline` (`S@t/@d/@r`, `r=-1`), `SegmentBase` (`indexRange`,
/// `Initialization@range`) and `SegmentList` (`SegmentURL@media/@mediaRange`), each inherited from Period to
/// AdaptationSet to Representation; `Role`; the DASH-IF thumbnail-tile and trick-mode properties.
///
/// A DTD or entity declaration is refused before anything is expanded; `ContentProtection` is an
/// ``DASHParseError/Kind/unsupported`` error; the manifest is bounded in bytes and in entries (elements and listed
/// segments).
///
/// Static presentations list every segment (``SegmentIndex/list(_:)``). In a dynamic one, template segments depend
/// on the time they are asked at (``SegmentIndex/template(_:)``), and the streaming layer lists them against its
/// clock.
public struct DASHManifestParser: Sendable {
    /// Bounds that keep a hostile or broken manifest from exhausting memory.
    public struct Limits: Sendable, Hashable {
        /// The largest manifest in bytes. Default 16 MiB.
        public var maximumBytes: Int
        /// The most elements and listed segments. Default 1,000,000.
        public var maximumEntries: Int

        /// Creates limits.
        public init(maximumBytes: Int = 16 << 20, maximumEntries: Int = 1_000_000) {
            self.maximumBytes = maximumBytes
            self.maximumEntries = maximumEntries
        }
    }

    /// The bounds.
    public var limits: Limits

    /// Creates a parser.
    public init(limits: Limits = Limits()) { self.limits = limits }

    /// Parses an MPD fetched from `url`.
    public func parse(_ bytes: some ContiguousBytes, url: URL) throws(DASHParseError) -> Presentation {
        let result: Result<Presentation, DASHParseError> = bytes.withUnsafeBytes { raw in
            Result { () throws(DASHParseError) in try parse(raw: raw, url: url) }
        }
        return try result.get()
    }

    private func parse(raw: UnsafeRawBufferPointer, url: URL) throws(DASHParseError) -> Presentation {
        guard raw.count <= limits.maximumBytes else {
            throw DASHParseError(
                .tooLarge, "the manifest is \(raw.count) bytes; the limit is \(limits.maximumBytes)")
        }
        let root: XMLNode
        do {
            root = try XMLTreeReader(maximumElements: limits.maximumEntries).parse(raw)
        } catch {
            switch error {
            case .malformed(let message, let offset):
                throw DASHParseError(.malformedXML, message, line: Self.line(of: offset, in: raw))
            case .refused(let message, let offset):
                throw DASHParseError(.refused, message, line: Self.line(of: offset, in: raw))
            case .tooLarge(let message, let offset):
                throw DASHParseError(.tooLarge, message, line: Self.line(of: offset, in: raw))
            }
        }
        var walk = MPDWalk(raw: raw, url: url, limits: limits)
        return try walk.presentation(root)
    }

    static func line(of offset: Int, in raw: UnsafeRawBufferPointer) -> Int {
        var line = 1
        for i in 0..<min(offset, raw.count) where raw[i] == 0x0A { line += 1 }
        return line
    }
}

/// One walk over the element tree.
struct MPDWalk {
    let raw: UnsafeRawBufferPointer
    let url: URL
    let limits: DASHManifestParser.Limits
    var listed = 0

    init(raw: UnsafeRawBufferPointer, url: URL, limits: DASHManifestParser.Limits) {
        self.raw = raw
        self.url = url
        self.limits = limits
    }

    func fail(
        _ kind: DASHParseError.Kind, _ message: String, _ node: XMLNode, attribute: String? = nil
    ) -> DASHParseError {
        DASHParseError(
            kind, message, element: node.name, attribute: attribute,
            line: DASHManifestParser.line(of: node.offset, in: raw))
    }

    // MARK: Structure

    mutating func presentation(_ root: XMLNode) throws(DASHParseError) -> Presentation {
        guard root.name == "MPD" else {
            throw fail(.notAnMPD, "the root element is <\(root.name)>, not <MPD>", root)
        }
        let protection = try protections(root, image: false)
        let type = root.attribute("type") ?? "static"
        guard type == "static" || type == "dynamic" else {
            throw fail(.malformed, "type must be static or dynamic (got '\(type)')", root, attribute: "type")
        }
        let isLive = type == "dynamic"
        let availabilityStart = try date(root, "availabilityStartTime")
        if isLive, availabilityStart == nil {
            throw fail(.missing, "a dynamic MPD needs availabilityStartTime", root, attribute: "availabilityStartTime")
        }
        let total = try duration(root, "mediaPresentationDuration")
        var timing: [Presentation.UTCTiming] = []
        for node in root.children("UTCTiming") {
            guard let scheme = node.attribute("schemeIdUri") else {
                throw fail(.missing, "UTCTiming needs schemeIdUri", node, attribute: "schemeIdUri")
            }
            let value = node.attribute("value") ?? ""
            let kind: Presentation.UTCTiming.Scheme
            switch scheme {
            case "urn:mpeg:dash:utc:http-iso:2014", "urn:mpeg:dash:utc:http-iso:2012": kind = .httpISO
            case "urn:mpeg:dash:utc:http-xsdate:2014", "urn:mpeg:dash:utc:http-xsdate:2012": kind = .httpXSDate
            case "urn:mpeg:dash:utc:http-head:2014", "urn:mpeg:dash:utc:http-head:2012": kind = .httpHead
            case "urn:mpeg:dash:utc:direct:2014", "urn:mpeg:dash:utc:direct:2012": kind = .direct
            default: kind = .other(scheme)
            }
            timing.append(Presentation.UTCTiming(scheme: kind, value: value))
        }
        let base = try resolvedBase(root, parent: url)
        let periodNodes = root.children("Period")
        guard !periodNodes.isEmpty else { throw fail(.missing, "an MPD needs at least one Period", root) }
        // Starts: `start`, else the previous period's end; ends: `duration`, else the next start, else the total.
        var starts: [Double] = []
        for (index, node) in periodNodes.enumerated() {
            if let start = try duration(node, "start") {
                starts.append(start)
            } else if index == 0 {
                starts.append(0)
            } else if let previous = try duration(periodNodes[index - 1], "duration") {
                starts.append(starts[index - 1] + previous)
            } else {
                throw fail(.missing, "the Period's start cannot be known (no start, no previous duration)", node)
            }
        }
        var periods: [Presentation.Period] = []
        for (index, node) in periodNodes.enumerated() {
            var length = try duration(node, "duration")
            if length == nil {
                if index + 1 < starts.count {
                    length = starts[index + 1] - starts[index]
                } else if let total {
                    length = total - starts[index]
                }
            }
            if let value = length, value < 0 {
                throw fail(.malformed, "the Period ends before it starts", node, attribute: "duration")
            }
            periods.append(
                try period(node, index: index, start: starts[index], duration: length, base: base, isLive: isLive))
        }
        var presentation = Presentation(
            streamingProtocol: .dash, url: url, isLive: isLive,
            duration: total ?? (isLive ? nil : periods.last.flatMap { $0.end }), periods: periods,
            availabilityStartTime: availabilityStart, publishTime: try date(root, "publishTime"),
            minimumUpdatePeriod: try duration(root, "minimumUpdatePeriod"),
            timeShiftBufferDepth: try duration(root, "timeShiftBufferDepth"),
            suggestedPresentationDelay: try duration(root, "suggestedPresentationDelay"),
            minBufferTime: try duration(root, "minBufferTime"), utcTiming: timing)
        presentation.protection = protection
        return presentation
    }

    mutating func period(
        _ node: XMLNode, index: Int, start: Double, duration: Double?, base: URL, isLive: Bool
    ) throws(DASHParseError) -> Presentation.Period {
        let periodBase = try resolvedBase(node, parent: base)
        let inherited = try SegmentInfo(node, walk: self)
        var tracks: [Presentation.Track] = []
        let context = PeriodContext(index: index, start: start, duration: duration, isLive: isLive)
        for set in node.children("AdaptationSet") {
            tracks.append(try track(set, base: periodBase, inherited: inherited, period: context))
        }
        return Presentation.Period(id: node.attribute("id"), start: start, duration: duration, tracks: tracks)
    }

    struct PeriodContext {
        var index: Int
        var start: Double
        var duration: Double?
        var isLive: Bool
    }

    mutating func track(
        _ set: XMLNode, base: URL, inherited: SegmentInfo, period: PeriodContext
    ) throws(DASHParseError) -> Presentation.Track {
        let setBase = try resolvedBase(set, parent: base)
        let setInfo = inherited.merged(with: try SegmentInfo(set, walk: self))
        let contentType = set.attribute("contentType")
        let mimeType = set.attribute("mimeType")
        var roles: [String] = []
        for role in set.children("Role") { if let value = role.attribute("value") { roles.append(value) } }
        let properties = set.children("EssentialProperty") + set.children("SupplementalProperty")
        let trick = properties.contains { $0.attribute("schemeIdUri") == "http://dashif.org/guidelines/trickmode" }
        let setLayout = try tileLayout(set)
        var representations: [Presentation.Rendition] = []
        let nodes = set.children("Representation")
        guard !nodes.isEmpty else { throw fail(.missing, "an AdaptationSet needs a Representation", set) }
        var firstMime: String?
        for node in nodes {
            let id = node.attribute("id")
            guard let id, !id.isEmpty else {
                throw fail(.missing, "a Representation needs an id", node, attribute: "id")
            }
            // Required by the schema, missing in real image sets: 0 when absent.
            let bandwidth = try unsigned(node, "bandwidth") ?? 0
            let repBase = try resolvedBase(node, parent: setBase)
            let info = setInfo.merged(with: try SegmentInfo(node, walk: self))
            let segments = try segmentIndex(
                info, base: repBase, id: id, bandwidth: Int(bandwidth), period: period, node: node)
            let mime = node.attribute("mimeType") ?? mimeType
            firstMime = firstMime ?? mime
            let setWidth = try unsigned(set, "width")
            let setHeight = try unsigned(set, "height")
            let setRate = try frameRate(set)
            let width = try unsigned(node, "width") ?? setWidth
            let height = try unsigned(node, "height") ?? setHeight
            let rate = try frameRate(node) ?? setRate
            representations.append(
                Presentation.Rendition(
                    id: id, bandwidth: Int(bandwidth), codecs: node.attribute("codecs") ?? set.attribute("codecs"),
                    mimeType: mime,
                    width: width.map(Int.init), height: height.map(Int.init), frameRate: rate,
                    channels: (node.child("AudioChannelConfiguration") ?? set.child("AudioChannelConfiguration"))?
                        .attribute("value"),
                    tileLayout: try tileLayout(node), segments: segments))
        }
        let kind: Presentation.TrackKind
        let typeText = (contentType ?? firstMime ?? "").lowercased()
        if trick {
            kind = .iFrame
        } else if typeText.hasPrefix("video") {
            kind = .video
        } else if typeText.hasPrefix("audio") {
            kind = .audio
        } else if typeText.hasPrefix("image") {
            kind = .image
        } else if typeText.hasPrefix("text") || typeText.contains("ttml") || typeText.contains("vtt") {
            kind = .text
        } else if representations.contains(where: { $0.width != nil }) {
            kind = .video
        } else {
            kind = .audio
        }
        return Presentation.Track(
            id: set.attribute("id"), kind: kind, language: set.attribute("lang"),
            name: set.child("Label")?.text.trimmingCharacters(in: .whitespacesAndNewlines), roles: roles,
            isDefault: roles.contains("main"), tileLayout: setLayout, renditions: representations)
    }

    func tileLayout(_ node: XMLNode) throws(DASHParseError) -> Presentation.TileLayout? {
        for property in node.children("EssentialProperty") + node.children("SupplementalProperty") {
            let scheme = property.attribute("schemeIdUri")
            guard
                scheme == "http://dashif.org/thumbnail_tile" || scheme == "http://dashif.org/guidelines/thumbnail_tile"
            else { continue }
            let value = property.attribute("value") ?? "1x1"
            let parts = value.lowercased().split(separator: "x")
            guard parts.count == 2, let c = Int(parts[0]), let r = Int(parts[1]), (1...65_535).contains(c),
                (1...65_535).contains(r)
            else {
                throw fail(
                    .malformed, "'\(value)' is not a tile layout (CxR, each 1 to 65535)", property, attribute: "value")
            }
            return Presentation.TileLayout(columns: c, rows: r)
        }
        return nil
    }

    mutating func segmentIndex(
        _ info: SegmentInfo, base: URL, id: String, bandwidth: Int, period: PeriodContext, node: XMLNode
    ) throws(DASHParseError) -> SegmentIndex {
        var timescale = info.timescale ?? 1
        guard timescale > 0 else { throw fail(.malformed, "timescale must be positive", node, attribute: "timescale") }
        var pto = info.presentationTimeOffset ?? 0
        // A fractional duration is kept exact to the millisecond by a finer timescale.
        var duration = info.duration.map { Int64($0.rounded()) }
        if let exact = info.duration, exact != exact.rounded(), info.timeline.isEmpty {
            timescale *= 1000
            pto *= 1000
            duration = Int64((exact * 1000).rounded())
        }
        let offset = period.start - Double(pto) / Double(timescale)
        if let media = info.media {
            let template = SegmentTemplateIndex(
                media: media, initialization: info.initialization, baseURL: base, representationID: id,
                bandwidth: bandwidth, startNumber: Int(info.startNumber ?? 1), timescale: timescale,
                duration: duration, timeline: info.timeline, presentationTimeOffset: pto,
                periodStart: period.start, periodDuration: period.duration, periodIndex: period.index)
            if info.timeline.isEmpty, (duration ?? 0) <= 0 {
                throw fail(.missing, "SegmentTemplate needs duration or a SegmentTimeline", node)
            }
            if period.isLive { return .template(template) }
            let references = try template.references(
                to: period.duration ?? .infinity, completeOnly: false, limit: limits.maximumEntries - listed)
            listed += references.count
            return .list(references)
        }
        if !info.segmentURLs.isEmpty {
            let initSection = try info.initialization(base: base, walk: self, node: node)
            let length = duration.map { Double($0) / Double(timescale) }
            var references: [SegmentReference] = []
            references.reserveCapacity(info.segmentURLs.count)
            guard info.segmentURLs.count <= limits.maximumEntries - listed else {
                throw fail(.tooLarge, "more than \(limits.maximumEntries) segments", node)
            }
            var time = Double(pto) / Double(timescale)
            for (k, segment) in info.segmentURLs.enumerated() {
                var seconds: Double
                var start = time
                if k < info.timeline.count {
                    let entry = info.timeline[k]
                    if let t = entry.time { start = Double(t) / Double(timescale) }
                    seconds = Double(entry.duration) / Double(timescale)
                } else if let length {
                    seconds = length
                } else {
                    throw fail(.missing, "SegmentList needs duration or a SegmentTimeline", node)
                }
                if let end = period.duration {
                    let begins = start - Double(pto) / Double(timescale)
                    // A list longer than its Period is clipped there: what starts at or after its end is not in it.
                    if begins >= end - 1e-9 { break }
                    if begins + seconds > end { seconds = end - begins }
                }
                references.append(
                    SegmentReference(
                        start: offset + start, duration: seconds, reference: segment.media ?? "", baseURL: base,
                        byteRange: segment.range, initialization: initSection, discontinuitySequence: period.index,
                        number: Int(info.startNumber ?? 1) + k, timing: .mediaTime(offset: offset)))
                time = start + seconds
            }
            listed += references.count
            return .list(references)
        }
        if let indexRange = info.indexRange {
            let initSection =
                try info.initialization(base: base, walk: self, node: node)
                ?? InitializationSection(url: base, byteRange: 0..<indexRange.lowerBound)
            return .segmentBase(
                SegmentBaseIndex(
                    url: base, indexRange: indexRange, initialization: initSection, timescale: timescale,
                    presentationTimeOffset: pto, periodStart: period.start, periodDuration: period.duration,
                    periodIndex: period.index))
        }
        // No segment information: the BaseURL is one segment holding the whole period.
        guard let length = period.duration else {
            throw fail(.missing, "the Representation has no segment information and the period no duration", node)
        }
        return .list([
            SegmentReference(
                start: period.start, duration: length, reference: base.absoluteString, baseURL: base,
                initialization: try info.initialization(base: base, walk: self, node: node),
                discontinuitySequence: period.index, number: 1, timing: .mediaTime(offset: offset))
        ])
    }
}
