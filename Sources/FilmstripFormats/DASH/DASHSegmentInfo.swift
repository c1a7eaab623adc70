import Foundation

/// Segment information inherited from Period to AdaptationSet to Representation (`SegmentTemplate`,
/// `SegmentList`, `SegmentBase`), each field overridden by the level below that gives it.
struct SegmentInfo {
    var media: String?
    var initialization: String?
    var initializationRange: Range<Int64>?
    var startNumber: Int64?
    var timescale: Int64?
    /// `duration`, in `timescale` units; real packagers write fractions (Roku's `634.566`).
    var duration: Double?
    var presentationTimeOffset: Int64?
    var timeline: [SegmentTemplateIndex.TimelineEntry] = []
    var indexRange: Range<Int64>?
    var segmentURLs: [(media: String?, range: Range<Int64>?)] = []

    init() {}

    init(_ node: XMLNode, walk: MPDWalk) throws(DASHParseError) {
        for element in ["SegmentBase", "SegmentList", "SegmentTemplate"] {
            guard let info = node.child(element) else { continue }
            if let value = try walk.unsigned(info, "timescale") { timescale = value }
            if let value = try walk.positiveNumber(info, "duration") { duration = value }
            if let value = try walk.unsigned(info, "startNumber") { startNumber = value }
            if let value = try walk.unsigned(info, "presentationTimeOffset") { presentationTimeOffset = value }
            if let value = try walk.byteRange(info, "indexRange") { indexRange = value }
            if element == "SegmentTemplate" {
                media = info.attribute("media") ?? media
                initialization = info.attribute("initialization") ?? initialization
            }
            if let initNode = info.child("Initialization") {
                initialization = initNode.attribute("sourceURL") ?? initialization
                initializationRange = try walk.byteRange(initNode, "range")
            }
            if let timelineNode = info.child("SegmentTimeline") {
                timeline = []
                for s in timelineNode.children where s.name == "S" {
                    guard let d = try walk.unsigned(s, "d") else {
                        throw walk.fail(.missing, "S needs d", s, attribute: "d")
                    }
                    let r = try walk.integer(s, "r") ?? 0
                    guard r >= -1, r <= Int64(Int32.max) else {
                        throw walk.fail(.malformed, "S@r must be -1 or more (got \(r))", s, attribute: "r")
                    }
                    timeline.append(.init(time: try walk.unsigned(s, "t"), duration: d, repeatCount: Int(r)))
                }
            }
            if element == "SegmentList" {
                segmentURLs = []
                for url in info.children where url.name == "SegmentURL" {
                    let range = try walk.byteRange(url, "mediaRange")
                    let media = url.attribute("media")
                    if media == nil, range == nil {
                        throw walk.fail(.missing, "SegmentURL needs media or mediaRange", url)
                    }
                    segmentURLs.append((media, range))
                }
            }
        }
    }

    /// This level with `child`'s fields laid over it.
    func merged(with child: SegmentInfo) -> SegmentInfo {
        var out = self
        out.media = child.media ?? media
        out.initialization = child.initialization ?? initialization
        out.initializationRange = child.initializationRange ?? initializationRange
        out.startNumber = child.startNumber ?? startNumber
        out.timescale = child.timescale ?? timescale
        out.duration = child.duration ?? duration
        out.presentationTimeOffset = child.presentationTimeOffset ?? presentationTimeOffset
        if !child.timeline.isEmpty { out.timeline = child.timeline }
        out.indexRange = child.indexRange ?? indexRange
        if !child.segmentURLs.isEmpty { out.segmentURLs = child.segmentURLs }
        return out
    }

    /// The initialisation section of a `SegmentList` or `SegmentBase` (`Initialization@sourceURL`/`@range`).
    func initialization(base: URL, walk: MPDWalk, node: XMLNode) throws(DASHParseError) -> InitializationSection? {
        guard initialization != nil || initializationRange != nil else { return nil }
        var url = base
        if let source = initialization {
            guard let resolved = URL(string: source, relativeTo: base)?.absoluteURL else {
                throw walk.fail(.malformed, "'\(source)' is not a URL", node)
            }
            url = resolved
        }
        return InitializationSection(url: url, byteRange: initializationRange)
    }
}
