public import FilmstripFormats
import FilmstripImaging
import Foundation

extension TrackThumbnails {
    /// Checks the loaded track for what players trip over: what reading it found (an `EXTINF` above the target
    /// duration, tiles past a segment's end), gaps and overlaps between cues, and, with every image fetched (its
    /// header is enough), images that cannot be loaded, regions outside their image, tile layouts that do not fit
    /// the sheet (errors) or disagree with its declared size, and HLS or DASH sheets wider than 1080 px, the widest a
    /// Roku device decodes (warnings).
    public func check() async -> [TrackFinding] {
        guard let source = currentSource, case .track(let track, _) = source.kind else { return [] }
        var findings = track.findings + TrackCheck.coverage(track)
        for (index, url) in source.sheets.enumerated() {
            do {
                let info = try ImageCodec.info(try await store.fetch(source, sheet: index))
                findings += TrackCheck.image(index, url, PixelSize(width: info.width, height: info.height), of: track)
            } catch {
                findings.append(
                    TrackFinding(
                        .error, "the image cannot be loaded: \(ThumbnailsError.wrap(error, url: url))", image: url))
            }
        }
        return findings
    }
}
