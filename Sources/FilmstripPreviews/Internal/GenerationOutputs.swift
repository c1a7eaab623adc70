import FilmstripMedia
import Foundation

/// The sheets and track files of one generation: the main width, and each extra width in its own `w<width>/`
/// directory. One decoded frame fills them all; each width scales it with its own converter (so no swscale context
/// is rebuilt per thumbnail).
struct GenerationOutputs: Sendable {
    struct Output: Sendable {
        let plan: Plan
        let sheets: SheetAssembly
        let directory: URL
        let options: PreviewTrackConfiguration
    }

    let outputs: [Output]

    var primary: Plan { outputs[0].plan }
    var needsBIFConverter: Bool { outputs[0].sheets.needsSecondConverter }
    /// The widest image any output writes (a tile, or the BIF's picture).
    var widestImage: Int {
        let tiles = outputs.map(\.plan.tileWidth).max() ?? 0
        return needsBIFConverter ? max(tiles, outputs[0].sheets.bifSize.width) : tiles
    }

    init(
        duration: Double, displaySize: (width: Int, height: Int), url: URL, directory: URL,
        options: PreviewTrackConfiguration
    ) throws(MediaError) {
        var made: [Output] = []
        let plan = try Plan(duration: duration, displaySize: displaySize, url: url, options: options)
        made.append(
            Output(
                plan: plan, sheets: SheetAssembly(plan: plan, directory: directory, options: options),
                directory: directory, options: options))
        for width in options.additionalWidths where width != options.width {
            var extra = options
            extra.width = width
            extra.additionalWidths = []
            extra.formats.remove(.bif)  // one BIF, at its own width
            let folder = directory.appendingPathComponent("w\(width)", isDirectory: true)
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            } catch {
                throw MediaError(
                    .outputFailed, "cannot create \(folder.path): \(error.localizedDescription)", underlying: error)
            }
            let widthPlan = try Plan(duration: duration, displaySize: displaySize, url: url, options: extra)
            made.append(
                Output(
                    plan: widthPlan, sheets: SheetAssembly(plan: widthPlan, directory: folder, options: extra),
                    directory: folder, options: extra))
        }
        outputs = made
    }

    /// One converter per width.
    func makeConverters() -> [FrameConverter] { outputs.map { _ in FrameConverter() } }

    /// Thumbnail `k` into every width's sheet.
    func fill(
        _ k: Int, with frame: OwnedFrame, converters: [FrameConverter], quarterTurns: Int,
        bifConverter: FrameConverter?
    ) throws(MediaError) {
        for (i, output) in outputs.enumerated() {
            try output.sheets.fill(
                k, with: frame, converter: converters[i], quarterTurns: quarterTurns,
                bifConverter: i == 0 ? bifConverter : nil)
        }
    }

    /// Writes every width's track files; the main width's summary lists the others in `otherWidths`.
    func finish(started: Date, bytesRead: Int, decodedFrames: Int) throws(MediaError) -> PreviewTrackSummary {
        var others: [PreviewTrackSummary] = []
        for output in outputs.dropFirst() {
            others.append(
                try PreviewTrackGenerator.finish(
                    plan: output.plan, sheets: output.sheets, directory: output.directory, options: output.options,
                    started: started, bytesRead: 0, decodedFrames: 0))
        }
        let main = outputs[0]
        var summary = try PreviewTrackGenerator.finish(
            plan: main.plan, sheets: main.sheets, directory: main.directory, options: main.options, started: started,
            bytesRead: bytesRead, decodedFrames: decodedFrames)
        summary.otherWidths = others
        return summary
    }
}
