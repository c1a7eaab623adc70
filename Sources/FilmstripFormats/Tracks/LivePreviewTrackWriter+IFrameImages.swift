import Foundation

/// The live I-frame image sequence: Apple's I-frame image sequence (``ImageIFrameSequence``) over the window's
/// tiles, one picture per tile. Its initialisation section is a file of its own, written once; each sheet's pictures
/// are the fragments of one media file (`iframe-images-<number>.mp4`), published, kept and retired with the sheet.
extension LivePreviewTrackWriter {
    /// The initialisation section's file name.
    public static let iFrameImagesInitialization = "iframe-images-init.mp4"

    /// The media file of sheet `number`'s pictures.
    public static func iFrameImagesMedia(_ number: Int64) -> String { "iframe-images-\(number).mp4" }

    /// The live I-frame playlist (`EXT-X-I-FRAMES-ONLY`, the map on ``iFrameImagesInitialization`` of
    /// `initializationLength` bytes): one entry per tile in the window, addressed by `EXT-X-BYTERANGE` in its sheet's
    /// media file, each lasting the interval. An entry's media sequence number is its tile's index on the timeline
    /// (its start over the interval), so it keeps its number from one publication to the next. A tile with no
    /// picture (a missing tile, or every tile of a gap sheet) is an `EXT-X-GAP` entry, which players do not load;
    /// those before the first picture are left out (the tiles of the first sheet before the run began). On a
    /// program-date timeline the first entry and each sheet's first carry `EXT-X-PROGRAM-DATE-TIME`, as the image
    /// playlist's sheets do. No `EXT-X-ENDLIST` until the stream ends.
    public static func iFrameImagesPlaylist(_ layout: LivePreviewLayout, initializationLength: Int) -> String {
        let interval = max(1, layout.interval)
        // Each tile: its start, its sheet's media file and its range there (nil: no picture).
        var entries: [(start: Int64, media: String, range: (length: Int, offset: Int)?, opensSheet: Bool)] = []
        for sheet in layout.sheets {
            let media = iFrameImagesMedia(sheet.number)
            let missing = Set(sheet.missing)
            let fragments = sheet.isGap ? [] : sheet.fragments ?? []
            var next = 0
            var offset = 0
            for tile in 0..<sheet.tiles {
                let start = sheet.start + Int64(tile) * interval
                guard !missing.contains(tile), next < fragments.count else {
                    entries.append((start, media, nil, tile == 0))
                    continue
                }
                entries.append((start, media, (fragments[next], offset), tile == 0))
                offset += fragments[next]
                next += 1
            }
        }
        if let first = entries.firstIndex(where: { $0.range != nil }) { entries.removeFirst(first) }
        var text = "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:\((interval + 999) / 1000)\n"
        text += "#EXT-X-MEDIA-SEQUENCE:\((entries.first?.start ?? layout.sheets.first?.start ?? 0) / interval)\n"
        text += "#EXT-X-I-FRAMES-ONLY\n"
        text += "#EXT-X-MAP:URI=\"\(iFrameImagesInitialization)\",BYTERANGE=\"\(initializationLength)@0\"\n"
        let duration = "#EXTINF:\(PreviewTrackWriter.seconds(interval)),\n"
        for (index, entry) in entries.enumerated() {
            if layout.programDates, index == 0 || entry.opensSheet { text += programDateTime(entry.start) }
            guard let range = entry.range else {
                text += "#EXT-X-GAP\n" + duration + entry.media + "\n"
                continue
            }
            text += duration + "#EXT-X-BYTERANGE:\(range.length)@\(range.offset)\n" + entry.media + "\n"
        }
        return text + (layout.ended ? "#EXT-X-ENDLIST\n" : "")
    }
}
