import FilmstripFormats
import FilmstripImaging
import FilmstripMedia
import FilmstripSync
import Foundation

/// Sheet memory shared by the workers. Each cell is written by exactly one worker, so cells never overlap; the
/// bookkeeping (allocation, remaining cells, encoding) is under a mutex.
final class SheetAssembly: Sendable {
    private final class Sheet: @unchecked Sendable {
        // Written by workers in disjoint cells; read by the encoder after the last cell is done (the mutex
        // hand-off orders those accesses).
        let memory: UnsafeMutableRawBufferPointer
        let width: Int
        let height: Int
        var remaining: Int

        init(width: Int, height: Int, cells: Int) {
            self.width = width
            self.height = height
            memory = .allocate(byteCount: width * height * 3, alignment: 64)
            memory.initializeMemory(as: UInt8.self, repeating: 0)
            remaining = cells
        }

        deinit { memory.deallocate() }
    }

    private let plan: Plan
    private let directory: URL
    private let options: PreviewTrackConfiguration
    private let state = Mutex<(sheets: [Int: Sheet], written: [Int: URL])>(([:], [:]))
    /// The BIF's images (with `.bif`).
    private let bif: EncodedImages?
    /// Each thumbnail as a JPEG of its own, at the tile size (with `.iframeImages`).
    private let singles: EncodedImages?
    /// The storyboard's one sheet (with `.storyboard`).
    private let storyboard: StoryboardCanvas?

    init(plan: Plan, directory: URL, options: PreviewTrackConfiguration) {
        self.plan = plan
        self.directory = directory
        self.options = options
        bif = options.formats.contains(.bif) ? EncodedImages() : nil
        singles = options.formats.contains(.iframeImages) ? EncodedImages() : nil
        storyboard = options.formats.contains(.storyboard) ? StoryboardCanvas(plan: plan, options: options) : nil
    }

    /// The BIF's image size: ``PreviewTrackConfiguration/bifWidth`` wide, the height from the tile's aspect (even).
    var bifSize: (width: Int, height: Int) {
        let w = options.bifWidth
        return (w, max(2, Int((Double(w) * Double(plan.tileHeight) / Double(plan.tileWidth) / 2).rounded()) * 2))
    }

    /// Whether workers need a second converter (for the BIF's larger images).
    var needsSecondConverter: Bool { bif != nil }

    /// Writes thumbnail `k` into its sheet (encoding the sheet once it is full), and into the BIF and the storyboard
    /// when they are asked for. `bifConverter` scales the BIF's image from the frame (a converter of its own, so
    /// neither swscale context is rebuilt per thumbnail).
    func fill(
        _ k: Int, with frame: OwnedFrame, converter: FrameConverter, quarterTurns: Int,
        bifConverter: FrameConverter? = nil
    ) throws(MediaError) {
        if let bif {
            let (w, h) = bifSize
            let (sw, sh) = FrameGeometry.turned(w, h, by: quarterTurns)
            let image = try (bifConverter ?? converter).image(
                frame.pointer, width: sw, height: sh, quarterTurns: quarterTurns)
            let encoded: [UInt8]
            do {
                encoded = try JPEGCodec.encode(image, quality: options.quality, subsampling: .s420)
            } catch {
                throw MediaError(.outputFailed, "cannot encode a BIF image", underlying: error)
            }
            bif.insert(encoded, at: k)
        }
        let s = k / plan.perSheet
        let cell = k % plan.perSheet
        let sheet = state.withLock { state -> Sheet in
            if let sheet = state.sheets[s] { return sheet }
            let (cells, usedRows) = plan.cells(ofSheet: s)
            let rows = plan.padsLastSheet(options) ? plan.rows : usedRows
            let sheet = Sheet(width: plan.columns * plan.tileWidth, height: rows * plan.tileHeight, cells: cells)
            state.sheets[s] = sheet
            return sheet
        }
        let stride = sheet.width * 3
        let x = (cell % plan.columns) * plan.tileWidth
        let y = (cell / plan.columns) * plan.tileHeight
        let origin = sheet.memory.baseAddress!.assumingMemoryBound(to: UInt8.self) + y * stride + x * 3
        if quarterTurns == 0 {
            try converter.convert(
                frame.pointer, width: plan.tileWidth, height: plan.tileHeight, into: origin, stride: stride)
        } else {
            let (w, h) = FrameGeometry.turned(plan.tileWidth, plan.tileHeight, by: quarterTurns)
            let image = try converter.image(frame.pointer, width: w, height: h, quarterTurns: quarterTurns)
            image.bytes.withUnsafeBytes { source in
                for row in 0..<plan.tileHeight {
                    (origin + row * stride).update(
                        from: source.baseAddress!.assumingMemoryBound(to: UInt8.self) + row * image.bytesPerRow,
                        count: image.bytesPerRow)
                }
            }
        }
        storyboard?.copy(k, from: origin, stride: stride)
        if let singles {
            // The tile as the sheet holds it: the same pixels the sheet's tracks show.
            let encoded: [UInt8]
            do {
                encoded = try options.encodeSequenceImage(
                    UnsafeRawPointer(origin), width: plan.tileWidth, height: plan.tileHeight, bytesPerRow: stride)
            } catch {
                throw MediaError(.outputFailed, "cannot encode the image of thumbnail \(k + 1)", underlying: error)
            }
            singles.insert(encoded, at: k)
        }
        let complete = state.withLock { state -> Bool in
            sheet.remaining -= 1
            return sheet.remaining == 0
        }
        if complete { try write(s, sheet) }
    }

    private func write(_ s: Int, _ sheet: Sheet) throws(MediaError) {
        let url = directory.appendingPathComponent(options.sheetName(s + 1))
        do {
            let bytes = try options.encodeSheet(
                UnsafeRawPointer(sheet.memory.baseAddress!), width: sheet.width, height: sheet.height)
            try Data(bytes).write(to: url, options: .atomic)
        } catch {
            throw MediaError(.outputFailed, "cannot write \(url.path)", underlying: error)
        }
        state.withLock { state in
            state.sheets[s] = nil
            state.written[s] = url
        }
    }

    /// The BIF's images in thumbnail order (with `.bif`); `nil` otherwise.
    func bifImages() -> [[UInt8]]? { bif?.ordered(count: plan.count) }

    /// Each thumbnail's own JPEG in thumbnail order (with `.iframeImages`); `nil` otherwise.
    func singleImages() -> [[UInt8]]? { singles?.ordered(count: plan.count) }

    /// Encodes and writes the storyboard's sheet (with `.storyboard`); returns it and its JSON.
    func finishStoryboard(directory: URL) throws(MediaError) -> (image: URL, json: String)? {
        try storyboard?.finish(directory: directory, options: options)
    }

    /// The written sheets in order; fails if any sheet is incomplete.
    func finish() throws(MediaError) -> [URL] {
        let written = state.withLock { $0.written }
        guard written.count == plan.sheetCount else {
            throw MediaError(.outputFailed, "only \(written.count) of \(plan.sheetCount) sheets were completed")
        }
        return (0..<plan.sheetCount).map { written[$0]! }
    }
}

/// Encoded images by thumbnail number, filled by the workers in any order.
private final class EncodedImages: Sendable {
    private let images = Mutex<[Int: [UInt8]]>([:])

    func insert(_ bytes: [UInt8], at k: Int) { images.withLock { $0[k] = bytes } }

    /// The images in thumbnail order; a thumbnail never written is empty.
    func ordered(count: Int) -> [[UInt8]] {
        let images = images.withLock { $0 }
        return (0..<count).map { images[$0] ?? [] }
    }
}
