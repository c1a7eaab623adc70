import FilmstripFormats
import FilmstripImaging
import FilmstripLoading
import FilmstripSync
import Foundation

/// The images of a ``TrackThumbnails`` engine: a sheet's bytes (inside the track, kept in memory, the local file or
/// cache entry, else the network), the sheet decoded once (two callers never decode it at the same time), and a
/// cue's thumbnail cut from it and encoded; each kept in a memory cache bounded by bytes.
final class SheetStore: Sendable {
    let configuration: ThumbnailsConfiguration
    let loader: ResourceLoader
    let sheets: MemoryCache<SheetKey, DecodedSheet>
    /// Downloaded sheet bytes, kept only when there is no disk cache (see
    /// ``ThumbnailsConfiguration/encodedSheetMemoryLimit``).
    let encodedSheets: MemoryCache<SheetKey, Data>
    let thumbnails: MemoryCache<ThumbnailKey, Thumbnail>
    /// Striped locks so two callers never decode the same sheet at once (the second waits and finds it cached).
    private let sheetLocks: [NSLock] = (0..<64).map { _ in NSLock() }

    init(configuration: ThumbnailsConfiguration, loader: ResourceLoader) {
        self.configuration = configuration
        self.loader = loader
        sheets = MemoryCache(costLimit: configuration.decodedSheetMemoryLimit)
        encodedSheets = MemoryCache(costLimit: configuration.encodedSheetMemoryLimit)
        thumbnails = MemoryCache(costLimit: configuration.thumbnailMemoryLimit)
    }

    /// Bytes held in memory: decoded sheets, encoded thumbnails, kept sheet bytes.
    var memoryUsage: Int { sheets.totalCost + thumbnails.totalCost + encodedSheets.totalCost }

    /// Empties the memory caches.
    func purge() {
        sheets.removeAll()
        thumbnails.removeAll()
        encodedSheets.removeAll()
    }

    /// Whether sheet `sheet` can be had without the network (inside the track, kept in memory, or on disk).
    func isLocal(_ source: ThumbnailSource, sheet: Int) -> Bool {
        let key = source.sheetKey(sheet)
        if source.embedded != nil || sheets.value(for: key) != nil || encodedSheets.value(for: key) != nil {
            return true
        }
        return loader.hasLocalCopy(of: source.sheets[sheet], range: source.sheetRanges[sheet])
    }

    /// Whether the entry's thumbnail or its decoded sheet is in memory.
    func hasInMemory(_ source: ThumbnailSource, entry: ThumbnailEntry) -> Bool {
        thumbnails.value(for: source.thumbnailKey(entry)) != nil
            || sheets.value(for: source.sheetKey(entry.sheet)) != nil
            || encodedSheets.value(for: source.sheetKey(entry.sheet)) != nil
    }

    /// The bytes of a sheet: from disk for `file:` URLs, otherwise through the cache (or only the cache offline).
    /// Bytes that are not a JPEG or PNG within the size limit are refused and never stored. Without a disk cache,
    /// remote bytes are kept in memory under `key`, so the sheet is not downloaded again.
    func fetch(_ source: ThumbnailSource, sheet: Int) async throws -> Data {
        if let inside = source.embeddedBytes(ofSheet: sheet) { return inside }
        let key = source.sheetKey(sheet)
        if let kept = encodedSheets.value(for: key) { return kept }
        let url = source.sheets[sheet]
        let limits = configuration.imageLimits
        let policy: ResourceLoader.CachePolicy = configuration.offline ? .cacheOnly : .cacheFirst
        let fetched = try await loader.data(for: url, range: source.sheetRanges[sheet], policy: policy) { data in
            try limits.validateHeader(ImageCodec.info(source.image(in: data)))
        }
        let data = try source.image(in: fetched)
        if loader.diskCache == nil, !url.isFileURL { encodedSheets.insert(data, for: key, cost: data.count) }
        return data
    }

    /// Crops and encodes the entry's thumbnail; `nil` when the sheet is neither decoded, nor local, nor given.
    func render(_ entry: ThumbnailEntry, source: ThumbnailSource, data: Data?) throws -> Thumbnail? {
        let key = source.thumbnailKey(entry)
        if let cached = thumbnails.value(for: key) { return cached }
        let url = source.sheets[entry.sheet]
        let start = Double(entry.startMilliseconds) / 1000
        let end = Double(entry.endMilliseconds) / 1000
        let thumbnail: Thumbnail
        if case .whole = entry.placement {
            // A whole-image cue: hand over the file as it is, no decode and re-encode.
            guard let bytes = try data ?? localBytes(source, sheet: entry.sheet) else { return nil }
            let info = try ImageCodec.info(bytes)
            try configuration.imageLimits.validateHeader(info)
            thumbnail = Thumbnail(
                imageData: bytes, format: info.format, timeStampStart: start, timeStampEnd: end, sourceURL: url,
                region: nil, width: info.width, height: info.height)
        } else {
            guard let sheet = try decoded(source: source, sheet: entry.sheet, data: data) else { return nil }
            let rect = try entry.rect(sheetWidth: sheet.pixels.width, sheetHeight: sheet.pixels.height)!
            let crop = try sheet.pixels.cropped(x: rect.x, y: rect.y, width: rect.width, height: rect.height)
            let encoded =
                switch sheet.format {
                case .jpeg:
                    try JPEGCodec.encode(
                        crop, quality: configuration.jpegQuality, subsampling: configuration.jpegChromaSubsampling)
                case .webp: try WebPCodec.encode(crop, quality: configuration.jpegQuality)
                case .png: try ImageCodec.encode(crop, as: .png)
                }
            thumbnail = Thumbnail(
                imageData: Data(encoded), format: sheet.format, timeStampStart: start, timeStampEnd: end,
                sourceURL: url, region: rect, width: rect.width, height: rect.height)
        }
        thumbnails.insert(thumbnail, for: key, cost: thumbnail.imageData.count + 256)
        return thumbnail
    }

    /// The sheet's bytes without the network: inside the track (BIF), kept in memory (no disk cache), or the
    /// local file or cache entry.
    private func localBytes(_ source: ThumbnailSource, sheet: Int) throws -> Data? {
        if let inside = source.embeddedBytes(ofSheet: sheet) { return inside }
        if let kept = encodedSheets.value(for: source.sheetKey(sheet)) { return kept }
        return try loader.localData(for: source.sheets[sheet], range: source.sheetRanges[sheet]).map(source.image(in:))
    }

    /// The decoded sheet from memory, else decoded from `data` or the local file; `nil` when there are no bytes.
    func decoded(source: ThumbnailSource, sheet: Int, data: Data?) throws -> DecodedSheet? {
        let key = source.sheetKey(sheet)
        if let decoded = sheets.value(for: key) { return decoded }
        let lock = sheetLocks[abs(key.hashValue % 64)]
        lock.lock()
        defer { lock.unlock() }
        if let decoded = sheets.value(for: key) { return decoded }
        let url = source.sheets[sheet]
        guard let bytes = try data ?? localBytes(source, sheet: sheet) else { return nil }
        let decoded: DecodedSheet
        do {
            let (pixels, format) = try ImageCodec.decode(bytes, limits: configuration.imageLimits)
            decoded = DecodedSheet(pixels: pixels, format: format)
        } catch {
            // A damaged cache entry is dropped so the next request fetches the image again.
            if !url.isFileURL { loader.diskCache?.remove(url, range: source.sheetRanges[sheet]) }
            throw ThumbnailsError.wrap(error, url: url)
        }
        sheets.insert(decoded, for: key, cost: decoded.pixels.byteCount)
        return decoded
    }

    /// The size of a sheet, read from its header (fetching it if it is not local).
    func size(_ source: ThumbnailSource, sheet: Int) async throws -> (width: Int, height: Int) {
        let info = try ImageCodec.info(try await fetch(source, sheet: sheet))
        return (info.width, info.height)
    }

    /// Fetches every sheet into the local cache, `width` at a time; the first failure fails it. `check` runs before
    /// each fetch (it throws once the load is no longer current).
    func fetchAll(
        _ source: ThumbnailSource, width: Int, check: @escaping @Sendable () throws -> Void
    ) async throws {
        let urls = source.sheets
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0
            func addNext() {
                guard next < urls.count else { return }
                let sheet = next
                next += 1
                group.addTask { [self] in
                    try check()
                    _ = try await fetch(source, sheet: sheet)
                }
            }
            for _ in 0..<max(1, width) { addNext() }
            while try await group.next() != nil { addNext() }
        }
    }
}
