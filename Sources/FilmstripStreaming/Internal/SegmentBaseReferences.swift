import FilmstripFormats
import Foundation

/// Segment references from a `sidx` of a `SegmentBase` rendition.
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
}
