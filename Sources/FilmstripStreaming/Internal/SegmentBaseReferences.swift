import FilmstripFormats
import Foundation

/// Segment references from the index of a `SegmentBase` rendition: a `sidx`, or a WebM file's `Cues`.
enum SegmentBaseReferences {
    static func make(_ sidx: SegmentIndexBox, index: SegmentBaseIndex) -> [SegmentReference] {
        let scale = Double(sidx.timescale)
        let ptoSeconds = Double(index.presentationTimeOffset) / Double(index.timescale)
        let offset = index.periodStart - ptoSeconds
        return sidx.entries.enumerated().map { k, entry in
            SegmentReference(
                start: offset + Double(entry.time) / scale, duration: Double(entry.duration) / scale,
                reference: index.url.absoluteString, baseURL: index.url, byteRange: entry.byteRange,
                initialization: index.initialization, discontinuitySequence: index.periodIndex, number: k + 1,
                timing: .mediaTime(offset: offset))
        }
    }

    /// From WebM `Cues`: each cluster from its time to the next one's (the last to the period's end, else the file's
    /// duration).
    static func make(_ cues: WebMCues, index: SegmentBaseIndex) -> [SegmentReference] {
        let ptoSeconds = Double(index.presentationTimeOffset) / Double(index.timescale)
        let offset = index.periodStart - ptoSeconds
        let end = index.periodDuration.map { $0 + ptoSeconds } ?? cues.duration
        return cues.entries.enumerated().map { k, entry in
            let next = k + 1 < cues.entries.count ? cues.entries[k + 1].time : end ?? entry.time
            return SegmentReference(
                start: offset + entry.time, duration: max(0, next - entry.time), reference: index.url.absoluteString,
                baseURL: index.url, byteRange: entry.byteRange, initialization: index.initialization,
                discontinuitySequence: index.periodIndex, number: k + 1, timing: .mediaTime(offset: offset))
        }
    }
}
