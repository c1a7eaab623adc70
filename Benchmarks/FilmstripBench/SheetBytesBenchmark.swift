import Filmstrip
import Foundation

/// Bytes per hour of preview sheets at equal fidelity: JPEG at the generator's default (quality 80, 4:4:4) against
/// WebP over a range of qualities, each sheet's tiles compared with the tiles before compression (SSIM per YCbCr
/// plane, ffmpeg's "All" weighting).
///
/// The tiles are what a 2 s keyframe track of a 720p video holds, 160x90, ten by ten on a sheet, rendered by the
/// ffmpeg CLI from three sources of different kinds (no natural footage ships with the repository or this machine):
/// `testsrc2` (graphics, text and saturated flat colour: 4:2:0 chroma's worst case), `mandelbrot` (fine detail and
/// smooth gradients), and a slow `gradients` field under strong temporal noise that survives the downscale (the
/// hardest case for both codecs).
enum SheetBytesBenchmark {
    static let tileWidth = 160
    static let tileHeight = 90
    static let columns = 10
    static let rows = 10
    static let interval = 2.0
    static let sheetsPerSource = 2

    struct Source {
        let name: String
        /// The lavfi source, given its frame rate.
        let generator: String
        /// Filters after it.
        var effects = ""
    }

    static let sources = [
        Source(name: "graphics", generator: "testsrc2=s=1280x720"),
        Source(name: "fractal", generator: "mandelbrot=s=1280x720"),
        Source(name: "noise", generator: "gradients=s=1280x720:speed=0.02", effects: ",noise=alls=8:allf=t+u"),
    ]

    /// One sheet's tiles before compression.
    struct Sheet {
        let source: String
        let tiles: [PixelBuffer]
        var pixels: PixelBuffer {
            var sheet = PixelBuffer(width: columns * tileWidth, height: rows * tileHeight)
            let rowBytes = tileWidth * 3
            for (k, tile) in tiles.enumerated() {
                let x = (k % columns) * tileWidth
                let y = (k / columns) * tileHeight
                for row in 0..<tileHeight {
                    let target = (y + row) * sheet.bytesPerRow + x * 3
                    sheet.bytes.replaceSubrange(
                        target..<(target + rowBytes), with: tile.bytes[(row * rowBytes)..<((row + 1) * rowBytes)])
                }
            }
            return sheet
        }
    }

    struct Row {
        let label: String
        let bytes: Int
        let meanSSIM: Double
        let meanLuma: Double
        let minimumSSIM: Double
        let encodeMilliseconds: Double
        let bySource: [String: Double]
    }

    static func run(mediaDirectory: URL) throws {
        let sheets = try makeSheets(in: mediaDirectory)
        let tiles = sheets.count * columns * rows
        let hours = Double(tiles) * interval / 3600
        print(
            "Sheet bytes at equal fidelity (\(sheets.count) sheets of \(columns)x\(rows) tiles of "
                + "\(tileWidth)x\(tileHeight), one tile per \(Int(interval)) s; sources: "
                + sources.map(\.name).joined(separator: ", ") + ")")
        print("  SSIM against the tile before compression (Y, Cb, Cr weighted 4:1:1); bytes per hour of video")
        let jpeg = try measure("JPEG q80 4:4:4 (default)", sheets) { sheet in
            try sheet.bytes.withBytes { raw in
                try JPEGCodec.encodeRGB(
                    raw.baseAddress!, width: sheet.width, height: sheet.height, bytesPerRow: sheet.bytesPerRow,
                    quality: 80, subsampling: .s444)
            }
        }
        var rows = [jpeg]
        rows.append(
            try measure("JPEG q80 4:2:0", sheets) { sheet in
                try sheet.bytes.withBytes { raw in
                    try JPEGCodec.encodeRGB(
                        raw.baseAddress!, width: sheet.width, height: sheet.height, bytesPerRow: sheet.bytesPerRow,
                        quality: 80, subsampling: .s420)
                }
            })
        var webp: [(quality: Int, row: Row)] = []
        for quality in [50, 60, 70, 75, 80, 85, 90] {
            let row = try measure("WebP q\(quality)", sheets) { try WebPCodec.encode($0, quality: quality) }
            webp.append((quality, row))
            rows.append(row)
        }
        print(
            "  " + "format".padding(toLength: 26, withPad: " ", startingAt: 0) + "   MB/hour   SSIM all (Y)      min"
                + "   "
                + sources.map { $0.name.padding(toLength: 8, withPad: " ", startingAt: 0) }.joined(separator: " ")
                + "   encode/sheet")
        for row in rows {
            let perHour = Double(row.bytes) / hours / 1_000_000
            print(
                "  " + row.label.padding(toLength: 26, withPad: " ", startingAt: 0)
                    + String(
                        format: " %9.2f   %.4f (%.4f)   %.4f", perHour, row.meanSSIM, row.meanLuma, row.minimumSSIM)
                    + "   "
                    + sources.map { String(format: "%.4f  ", row.bySource[$0.name] ?? .nan) }.joined(separator: " ")
                    + String(format: "   %.1f ms", row.encodeMilliseconds))
        }
        // The smallest WebP whose mean SSIM is within 0.005 of JPEG's.
        let floor = jpeg.meanSSIM - 0.005
        if let pick = webp.first(where: { $0.row.meanSSIM >= floor }) {
            let saved = 1 - Double(pick.row.bytes) / Double(jpeg.bytes)
            print(
                String(
                    format: "  equal fidelity: WebP q%d (SSIM %.4f, JPEG %.4f) takes %.0f%% fewer bytes than JPEG "
                        + "(target ≥ 30%%)", pick.quality, pick.row.meanSSIM, jpeg.meanSSIM, saved * 100))
        } else {
            print("  equal fidelity: no WebP quality tried reaches JPEG's SSIM less 0.005")
        }
        if let standard = webp.first(where: { $0.quality == 80 })?.row {
            print(
                String(
                    format: "  at the default quality (80) WebP takes %.0f%% fewer bytes, SSIM %.4f against %.4f",
                    (1 - Double(standard.bytes) / Double(jpeg.bytes)) * 100, standard.meanSSIM, jpeg.meanSSIM))
        }
        print("")
    }

    /// Encodes every sheet with `encode`, decodes it, and compares each tile with its original.
    static func measure(_ label: String, _ sheets: [Sheet], encode: (PixelBuffer) throws -> [UInt8]) throws -> Row {
        var bytes = 0
        var all: [Double] = []
        var luma: [Double] = []
        var times: [Double] = []
        var bySource: [String: [Double]] = [:]
        for sheet in sheets {
            let pixels = sheet.pixels
            let start = now()
            let encoded = try encode(pixels)
            times.append(Double(now() - start) / 1e6)
            bytes += encoded.count
            let (decoded, _) = try ImageCodec.decode(encoded)
            for (k, tile) in sheet.tiles.enumerated() {
                let crop = try decoded.cropped(
                    x: (k % columns) * tileWidth, y: (k / columns) * tileHeight, width: tileWidth, height: tileHeight)
                guard let similarity = crop.ssim(against: tile) else { throw BenchError("tile sizes differ") }
                all.append(similarity.all)
                luma.append(similarity.y)
                bySource[sheet.source, default: []].append(similarity.all)
            }
        }
        func mean(_ values: [Double]) -> Double { values.reduce(0, +) / Double(max(1, values.count)) }
        return Row(
            label: label, bytes: bytes, meanSSIM: mean(all), meanLuma: mean(luma), minimumSSIM: all.min() ?? .nan,
            encodeMilliseconds: median(times), bySource: bySource.mapValues(mean))
    }

    /// The sheets' tiles, rendered once by the ffmpeg CLI (720p frames, only those every 2 s, scaled to 160x90) and
    /// kept.
    static func makeSheets(in directory: URL) throws -> [Sheet] {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let count = sheetsPerSource * columns * rows
        let seconds = Double(count) * interval
        let tileBytes = tileWidth * tileHeight * 3
        var sheets: [Sheet] = []
        for source in sources {
            let file = directory.appendingPathComponent("tiles-\(source.name).rgb")
            if (try? Data(contentsOf: file))?.count != count * tileBytes {
                _ = try FilmstripBench.run(
                    "/usr/bin/env",
                    [
                        "ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
                        "\(source.generator):r=\(1 / interval)\(source.effects)", "-t", "\(seconds)", "-vf",
                        "scale=\(tileWidth):\(tileHeight):flags=area", "-pix_fmt", "rgb24", "-f", "rawvideo", file.path,
                    ])
            }
            let data = [UInt8](try Data(contentsOf: file))
            guard data.count == count * tileBytes else {
                throw BenchError("ffmpeg made \(data.count / tileBytes) tiles of \(source.name), not \(count)")
            }
            let tiles = (0..<count).map { k in
                PixelBuffer(
                    width: tileWidth, height: tileHeight, layout: .rgb,
                    bytes: Array(data[(k * tileBytes)..<((k + 1) * tileBytes)]))
            }
            for s in 0..<sheetsPerSource {
                sheets.append(
                    Sheet(source: source.name, tiles: Array(tiles[(s * rows * columns)..<((s + 1) * rows * columns)])))
            }
        }
        return sheets
    }
}
