public import Foundation

/// A DASH `SegmentTemplate` (with `duration` or a `SegmentTimeline`) for one Representation: it lists the segments
/// that exist up to a given time, so a live rendition can be asked again as time passes.
///
/// Segment `n` of a `duration` template spans media time `(n − startNumber)·duration` and becomes available at
/// `availabilityStartTime + periodStart + (n − startNumber + 1)·duration` (its end). A timeline segment becomes
/// available at its end too.
public struct SegmentTemplateIndex: Sendable, Hashable {
    /// The `media` template.
    public var media: String
    /// The `initialization` template, if any.
    public var initialization: String?
    /// What the expanded templates are relative to.
    public var baseURL: URL
    /// `$RepresentationID$`.
    public var representationID: String
    /// `$Bandwidth$`.
    public var bandwidth: Int
    /// `startNumber` (default 1).
    public var startNumber: Int
    /// `timescale` (default 1).
    public var timescale: Int64
    /// `duration` in `timescale` units, for templates without a timeline.
    public var duration: Int64?
    /// The `SegmentTimeline`, if any.
    public var timeline: [TimelineEntry]
    /// `presentationTimeOffset` in `timescale` units.
    public var presentationTimeOffset: Int64
    /// The period's start, seconds.
    public var periodStart: Double
    /// The period's length, when known.
    public var periodDuration: Double?
    /// The period's position among the presentation's periods (the segments' discontinuity sequence).
    public var periodIndex: Int

    /// One `S` element: `t` (start, `nil` to continue from the previous), `d` and `r` (−1: repeat until the next
    /// entry, the period's end or the live edge).
    public struct TimelineEntry: Sendable, Hashable {
        /// `@t`.
        public var time: Int64?
        /// `@d`.
        public var duration: Int64
        /// `@r`.
        public var repeatCount: Int

        /// Creates an entry.
        public init(time: Int64?, duration: Int64, repeatCount: Int) {
            self.time = time
            self.duration = duration
            self.repeatCount = repeatCount
        }
    }

    /// Creates an index.
    public init(
        media: String, initialization: String?, baseURL: URL, representationID: String, bandwidth: Int,
        startNumber: Int, timescale: Int64, duration: Int64?, timeline: [TimelineEntry], presentationTimeOffset: Int64,
        periodStart: Double, periodDuration: Double?, periodIndex: Int
    ) {
        self.media = media
        self.initialization = initialization
        self.baseURL = baseURL
        self.representationID = representationID
        self.bandwidth = bandwidth
        self.startNumber = startNumber
        self.timescale = timescale
        self.duration = duration
        self.timeline = timeline
        self.presentationTimeOffset = presentationTimeOffset
        self.periodStart = periodStart
        self.periodDuration = periodDuration
        self.periodIndex = periodIndex
    }

    /// The initialisation section, if the template has one.
    public var initializationSection: InitializationSection? {
        guard let initialization,
            let reference = try? DASHTemplate.expand(
                initialization, representationID: representationID, number: nil, time: nil, bandwidth: bandwidth)
        else { return nil }
        return InitializationSection(url: resolveReference(reference, against: baseURL))
    }

    /// The segments of the period up to `end` seconds of period time, at most `limit` of them.
    ///
    /// - Parameters:
    ///   - start: with a finite value, only segments that end after it are listed.
    ///   - end: with `completeOnly`, segments must end at or before it (what a live edge has made available);
    ///     otherwise they must start before it (a static period's end; the last segment is cut to it).
    /// - Throws: ``DASHParseError`` when a template cannot be expanded or more than `limit` segments would be listed.
    public func references(
        periodTimeFrom start: Double = -.infinity, to end: Double, completeOnly: Bool, limit: Int
    ) throws(DASHParseError) -> [SegmentReference] {
        let scale = Double(timescale)
        let pto = Double(presentationTimeOffset)
        let offset = periodStart - pto / scale
        let initSection = initializationSection
        var out: [SegmentReference] = []
        func add(number: Int, time: Int64, length: Int64) throws(DASHParseError) {
            guard out.count < limit else {
                throw DASHParseError(.tooLarge, "the SegmentTemplate lists more than \(limit) segments")
            }
            let reference = try DASHTemplate.expand(
                media, representationID: representationID, number: number, time: time, bandwidth: bandwidth)
            let full = Double(length) / scale
            var seconds = full
            let begins = Double(time) / scale - pto / scale
            if !completeOnly, end.isFinite { seconds = min(seconds, end - begins) }
            var segment = SegmentReference(
                start: periodStart + begins, duration: seconds, reference: reference, baseURL: baseURL,
                initialization: initSection, discontinuitySequence: periodIndex, number: number,
                timing: .mediaTime(offset: offset))
            if seconds < full { segment.fullDuration = full }
            out.append(segment)
        }
        // Bounds in media time.
        let mediaEnd = end * scale + pto
        let mediaStart = start * scale + pto
        /// Whether a segment [t, t + d) is inside the request; `nil` once past it.
        func wanted(_ t: Int64, _ d: Int64) -> Bool? {
            let segmentEnd = Double(t) + Double(d)
            if completeOnly ? segmentEnd > mediaEnd + 0.5 : Double(t) >= mediaEnd - 0.5 { return nil }
            return segmentEnd > mediaStart + 0.5
        }
        if timeline.isEmpty {
            guard let duration, duration > 0 else {
                throw DASHParseError(.missing, "SegmentTemplate needs a positive duration or a SegmentTimeline")
            }
            guard end.isFinite else {
                throw DASHParseError(.missing, "a SegmentTemplate without a timeline needs the period's duration")
            }
            var k = start.isFinite ? max(0, Int(saturating: (start * scale / Double(duration)).rounded(.down)) - 1) : 0
            while true {
                // Outside numbers are held to 2^53 (IntegerBounds), but a product of two is not: checked.
                let (offset, overflow) = Int64(k).multipliedReportingOverflow(by: duration)
                let (t, past) = presentationTimeOffset.addingReportingOverflow(offset)
                guard !overflow, !past else {
                    throw DASHParseError(.malformed, "segment \(k) of the SegmentTemplate starts past 2^63 time units")
                }
                guard let inside = wanted(t, duration) else { break }
                if inside { try add(number: startNumber + k, time: t, length: duration) }
                k += 1
            }
            return out
        }
        var number = startNumber
        var time: Int64 = 0
        for (index, entry) in timeline.enumerated() {
            if let t = entry.time { time = t }
            guard entry.duration > 0 else { throw DASHParseError(.malformed, "S@d must be positive", element: "S") }
            var repeats = entry.repeatCount
            if repeats < 0 {
                // Until the next S, else the end asked for.
                let until = index + 1 < timeline.count ? Double(timeline[index + 1].time ?? time) : mediaEnd
                guard until.isFinite else {
                    throw DASHParseError(.missing, "S@r=-1 at the end needs the period's duration", element: "S")
                }
                repeats = max(0, Int(saturating: ((until - Double(time)) / Double(entry.duration)).rounded(.up)) - 1)
            }
            // Segments wholly before the request are stepped over at once (a long live timeline).
            if mediaStart.isFinite, Double(time) < mediaStart {
                let skip = min(
                    repeats, max(0, Int(saturating: ((mediaStart - Double(time)) / Double(entry.duration)) - 1)))
                let (step, overflow) = Int64(skip).multipliedReportingOverflow(by: entry.duration)
                guard !overflow, time.addingReportingOverflow(step).overflow == false else {
                    throw DASHParseError(.malformed, "the SegmentTimeline runs past 2^63 time units", element: "S")
                }
                time += step
                number += skip
                repeats -= skip
            }
            for _ in 0...repeats {
                guard let inside = wanted(time, entry.duration) else { return out }
                if inside { try add(number: number, time: time, length: entry.duration) }
                guard time.addingReportingOverflow(entry.duration).overflow == false else {
                    throw DASHParseError(.malformed, "the SegmentTimeline runs past 2^63 time units", element: "S")
                }
                time += entry.duration
                number += 1
            }
        }
        return out
    }
}

/// DASH template expansion (`$RepresentationID$`, `$Number$`, `$Time$`, `$Bandwidth$`, `%0Nd` widths, `$$`).
public enum DASHTemplate {
    /// Expands `template`; an identifier whose value is not given (`nil`), or an unknown one, is an error.
    public static func expand(
        _ template: String, representationID: String, number: Int?, time: Int64?, bandwidth: Int
    ) throws(DASHParseError) -> String {
        guard template.utf8.contains(0x24) else { return template }  // no '$'
        var out = ""
        var rest = Substring(template)
        while let dollar = rest.firstIndex(of: "$") {
            out += rest[..<dollar]
            let afterDollar = rest.index(after: dollar)
            guard let close = rest[afterDollar...].firstIndex(of: "$") else {
                throw DASHParseError(
                    .malformed, "an unterminated $ identifier in '\(template)'", element: "SegmentTemplate")
            }
            let identifier = rest[afterDollar..<close]
            rest = rest[rest.index(after: close)...]
            if identifier.isEmpty {
                out += "$"
                continue
            }
            let name: Substring
            var width = 1
            if let percent = identifier.firstIndex(of: "%") {
                name = identifier[..<percent]
                let format = identifier[identifier.index(after: percent)...]
                guard format.last == "d", let w = Int(format.dropLast().isEmpty ? "1" : format.dropLast()), w >= 0,
                    w <= 32
                else {
                    throw DASHParseError(
                        .malformed, "unsupported width format '\(identifier)' in '\(template)'",
                        element: "SegmentTemplate")
                }
                width = max(1, w)
            } else {
                name = identifier
            }
            let value: String
            switch name {
            case "RepresentationID":
                out += representationID
                continue
            case "Number":
                guard let number else {
                    throw DASHParseError(
                        .malformed, "$Number$ cannot be used in '\(template)' here", element: "SegmentTemplate")
                }
                value = String(number)
            case "Time":
                guard let time else {
                    throw DASHParseError(
                        .malformed, "$Time$ cannot be used in '\(template)' here", element: "SegmentTemplate")
                }
                value = String(time)
            case "Bandwidth":
                value = String(bandwidth)
            default:
                throw DASHParseError(
                    .malformed, "unknown identifier $\(identifier)$ in '\(template)'", element: "SegmentTemplate")
            }
            if value.count < width { out += String(repeating: "0", count: width - value.count) }
            out += value
        }
        out += rest
        return out
    }
}
