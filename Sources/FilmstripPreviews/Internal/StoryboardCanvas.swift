import FilmstripFormats
import FilmstripImaging
import FilmstripMedia
import Foundation

/// The storyboard's one sheet: every `step`-th thumbnail (so that all of them fit within the maximum sheet size),
/// copied from its place in the track's sheets.
///
/// Sendable because each thumbnail's tile is a disjoint region of `memory`, written by the one worker that made it;
/// ``finish(directory:options:)`` reads it after every worker is done (the task group's completion orders that).
final class StoryboardCanvas: @unchecked Sendable {
    let step: Int
    let columns: Int
    let rows: Int
    let tileWidth: Int
    let tileHeight: Int
    private let plan: Plan
    private let memory: UnsafeMutableRawBufferPointer

    init(plan: Plan, options: PreviewTrackConfiguration) {
        self.plan = plan
        tileWidth = plan.tileWidth
        tileHeight = plan.tileHeight
        let maxColumns = max(1, options.maximumSheetSize.width / plan.tileWidth)
        let maxRows = max(1, options.maximumSheetSize.height / plan.tileHeight)
        step = max(1, (plan.count + maxColumns * maxRows - 1) / (maxColumns * maxRows))
        let tiles = (plan.count + step - 1) / step
        columns = min(tiles, maxColumns)
        rows = (tiles + columns - 1) / columns
        memory = .allocate(byteCount: columns * tileWidth * rows * tileHeight * 3, alignment: 64)
        memory.initializeMemory(as: UInt8.self, repeating: 0)
    }

    deinit { memory.deallocate() }

    /// Copies thumbnail `k`'s tile (at `origin`, rows `stride` bytes apart) when the storyboard keeps it.
    func copy(_ k: Int, from origin: UnsafeMutablePointer<UInt8>, stride: Int) {
        guard k % step == 0 else { return }
        let slot = k / step
        let rowBytes = columns * tileWidth * 3
        let base =
            memory.baseAddress!.assumingMemoryBound(to: UInt8.self)
            + (slot / columns) * tileHeight * rowBytes + (slot % columns) * tileWidth * 3
        for row in 0..<tileHeight {
            (base + row * rowBytes).update(from: origin + row * stride, count: tileWidth * 3)
        }
    }

    /// Writes `storyboard.jpg` (or `.webp`) and returns it with the storyboard JSON.
    func finish(directory: URL, options: PreviewTrackConfiguration) throws(MediaError) -> (image: URL, json: String) {
        let name = "storyboard." + options.imageFormat.fileExtension
        let url = directory.appendingPathComponent(name)
        do {
            let bytes = try options.encodeSheet(
                UnsafeRawPointer(memory.baseAddress!), width: columns * tileWidth, height: rows * tileHeight)
            try Data(bytes).write(to: url, options: .atomic)
        } catch {
            throw MediaError(.outputFailed, "cannot write \(url.path)", underlying: error)
        }
        var tiles: [(start: Int64, x: Int, y: Int)] = []
        for slot in 0..<((plan.count + step - 1) / step) {
            tiles.append(
                (plan.startMilliseconds(of: slot * step), (slot % columns) * tileWidth, (slot / columns) * tileHeight))
        }
        let json = PreviewTrackWriter.storyboard(
            url: name, tileWidth: tileWidth, tileHeight: tileHeight, duration: plan.duration, tiles: tiles)
        return (url, json)
    }
}
