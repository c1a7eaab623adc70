import FilmstripFormats
import Foundation

/// What ``TrackThumbnails/check()`` finds in a track and in each of its images, once the image's size is known.
enum TrackCheck {
    /// What is wrong with image `index` of `track` (at `url`), `size` pixels: wider than a Roku decodes, not the
    /// declared size, a region outside it, a tile layout that does not fit or divide it.
    static func image(_ index: Int, _ url: URL, _ size: PixelSize, of track: ThumbnailTrack) -> [TrackFinding] {
        var findings: [TrackFinding] = []
        if size.width > 1080, track.format == .hls || track.format == .dash {
            findings.append(
                TrackFinding(
                    .warning, "the sheet is \(size.width) px wide; Roku devices decode sheets up to 1080 px wide",
                    image: url))
        }
        let declared = index < track.declaredImageSizes.count ? track.declaredImageSizes[index] : nil
        if let declared, declared != size {
            let severity: TrackFinding.Severity =
                declared.width > size.width || declared.height > size.height ? .error : .warning
            findings.append(
                TrackFinding(severity, "the track declares a \(declared) sheet; the image is \(size)", image: url))
        }
        for cue in track.cues where cue.imageIndex == index {
            let location = cue.line > 0 ? "line \(cue.line)" : nil
            if let region = cue.region, !fits(region, in: size) {
                findings.append(
                    TrackFinding(.error, "region \(region) exceeds the \(size) image", location: location, image: url))
            } else if let tile = cue.tile, tile.rect(sheetWidth: size.width, sheetHeight: size.height) == nil {
                findings.append(
                    TrackFinding(
                        .error, "a \(tile.columns)x\(tile.rows) layout does not fit the \(size) image",
                        location: location, image: url))
                break
            } else if let tile = cue.tile, declared == nil,
                size.width % Int(tile.columns) != 0 || size.height % Int(tile.rows) != 0
            {
                findings.append(
                    TrackFinding(
                        .warning,
                        "the \(size) image does not divide into a \(tile.columns)x\(tile.rows) layout evenly",
                        location: location, image: url))
                break
            }
        }
        return findings
    }

    private static func fits(_ region: SpatialRegion, in size: PixelSize) -> Bool {
        switch region.unit {
        case .pixel:
            return Int(region.x) + Int(region.width) <= size.width && Int(region.y) + Int(region.height) <= size.height
        case .percent:
            return Int(region.x) + Int(region.width) <= 100 && Int(region.y) + Int(region.height) <= 100
        }
    }

    /// Gaps and overlaps between cues, in time order.
    static func coverage(_ track: ThumbnailTrack) -> [TrackFinding] {
        var findings: [TrackFinding] = []
        guard var runEnd = track.cues.first?.endMilliseconds else { return [] }
        func place(_ cue: ThumbnailCue, _ k: Int) -> String { cue.line > 0 ? "line \(cue.line)" : "cue \(k + 1)" }
        for (k, cue) in track.cues.enumerated().dropFirst() {
            if cue.startMilliseconds > runEnd {
                findings.append(
                    TrackFinding(
                        .warning,
                        String(
                            format: "a gap from %.3f to %.3f s has no thumbnail", Double(runEnd) / 1000, cue.start),
                        location: place(cue, k)))
            } else if cue.startMilliseconds < runEnd {
                findings.append(
                    TrackFinding(
                        .warning,
                        String(
                            format: "the cue overlaps the one before it from %.3f to %.3f s", cue.start,
                            Double(min(runEnd, cue.endMilliseconds)) / 1000), location: place(cue, k)))
            }
            runEnd = max(runEnd, cue.endMilliseconds)
        }
        return findings
    }
}
