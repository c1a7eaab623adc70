import FilmstripFormats
import Foundation

/// What a download writes once every file is verified: the protected stream's key ids and licence, the preview
/// track, the playlists (the master last) and the record that makes the folder a finished download.
struct DownloadFinisher {
    let store: DownloadStore
    let plan: DownloadPlan
    let source: URL

    /// The key ids the manifest declares and those the stored initialisation sections' `tenc` boxes hold.
    func keyIDs() async throws -> [Data] {
        var found = plan.keyIDs
        for file in plan.files where file.object == .initialization {
            guard let data = try? Data(contentsOf: store.directory.appendingPathComponent(file.path)) else { continue }
            found += Self.tencKeyIDs(data)
        }
        var seen = Set<Data>()
        return found.filter { seen.insert($0).inserted }
    }

    /// Stores the keys of `keyIDs` (given, else asked of `license` in one request) as `license.json`, a JWK set only
    /// the owner may read.
    func storeLicense(_ keyIDs: [Data], keys: ContentKeys, license: ClearKeyLicense?) async throws {
        var known: [Data: Data] = [:]
        for kid in keyIDs { known[kid] = keys.key(for: kid) }
        let missing = keyIDs.filter { known[$0] == nil }
        if !missing.isEmpty, let license {
            do {
                let licensed = try await license.keys(for: missing)
                for kid in missing { known[kid] = licensed.key(for: kid) }
            } catch {
                throw DownloadError(.license, "the licence for the download was refused: \(error)", underlying: error)
            }
        }
        if let kid = keyIDs.first(where: { known[$0] == nil }) {
            throw DownloadError(.license, "no key was given or licensed for the key id \(ContentKeys.hex(kid))")
        }
        let jwks = keyIDs.map { kid in
            "{\"kty\":\"oct\",\"kid\":\"\(ClearKeyLicense.base64url(kid))\","
                + "\"k\":\"\(ClearKeyLicense.base64url(known[kid]!))\"}"
        }
        let text = "{\"keys\":[\(jwks.joined(separator: ","))],\"type\":\"persistent-license\"}\n"
        try store.writeAtomically(Data(text.utf8), to: Download.licenseName, secret: true)
    }

    /// Writes the preview track, the playlists and the record; the download.
    func finish(keyIDs: [Data], licenseFailure: String?) throws -> Download {
        if let previews = plan.previews {
            try store.writeAtomically(Data(previewTrack(previews).utf8), to: PreviewPlan.path)
        }
        for (path, text) in plan.playlists {
            try store.writeAtomically(Data(text.utf8), to: path)
        }
        let hasLicense = FileManager.default.fileExists(
            atPath: store.directory.appendingPathComponent(Download.licenseName).path)
        let record = DownloadRecord(
            source: source.absoluteString, manifest: DownloadPlan.master,
            previews: plan.previews == nil ? nil : PreviewPlan.path,
            iFrames: plan.playlists.contains { $0.path == "iframes.m3u8" } ? "iframes.m3u8" : nil,
            license: hasLicense && !keyIDs.isEmpty ? Download.licenseName : nil,
            keyIDs: keyIDs.map(ContentKeys.hex), licenseFailure: licenseFailure, files: plan.files.count,
            bytes: plan.files.reduce(0) { $0.saturating(store.verified($1)?.length ?? 0) }, duration: plan.duration)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            try store.writeAtomically(try encoder.encode(record), to: Download.recordName)
        } catch let error as DownloadError {
            throw error
        } catch {
            throw DownloadError(.storage, "cannot write the download record: \(error)", underlying: error)
        }
        return try Download(at: store.directory)
    }

    /// The image track as WebVTT over the stored images: each cue's region as `#xywh` (a tile's worked out from the
    /// stored image's size).
    private func previewTrack(_ previews: PreviewPlan) -> String {
        var out = "WEBVTT\n"
        var sizes: [Int: (Int, Int)] = [:]
        for cue in previews.track.cues {
            let index = Int(cue.imageIndex)
            guard previews.imagePaths.indices.contains(index) else { continue }
            var target = String(previews.imagePaths[index].dropFirst("previews/".count))
            if let region = cue.region {
                let unit = region.unit == .percent ? "percent:" : ""
                target += "#xywh=\(unit)\(region.x),\(region.y),\(region.width),\(region.height)"
            } else if let tile = cue.tile, tile.columns > 0, tile.rows > 0 {
                if sizes[index] == nil { sizes[index] = imageSize(previews.imagePaths[index]) }
                if let (width, height) = sizes[index] {
                    let w = width / Int(tile.columns)
                    let h = height / Int(tile.rows)
                    target += "#xywh=\(Int(tile.column) * w),\(Int(tile.row) * h),\(w),\(h)"
                }
            }
            let start = WebVTTTimestamp.string(milliseconds: cue.startMilliseconds)
            out += "\n\(start) --> \(WebVTTTimestamp.string(milliseconds: cue.endMilliseconds))\n\(target)\n"
        }
        return out
    }

    private func imageSize(_ path: String) -> (Int, Int)? {
        guard let handle = FileHandle(forReadingAtPath: store.directory.appendingPathComponent(path).path),
            let head = try? handle.read(upToCount: 1 << 16)
        else { return nil }
        try? handle.close()
        let header = ImageHeader(head)
        guard let width = header.width, let height = header.height else { return nil }
        return (width, height)
    }

    /// The `default_KID` of every `tenc` box in an initialisation section (ISO/IEC 23001-7 8.2).
    static func tencKeyIDs(_ data: Data) -> [Data] {
        let bytes = [UInt8](data)
        var found: [Data] = []
        var i = 4
        while i + 28 <= bytes.count {
            if bytes[i] == 0x74, bytes[i + 1] == 0x65, bytes[i + 2] == 0x6E, bytes[i + 3] == 0x63 {
                let size = bytes[(i - 4)..<i].reduce(0) { $0 << 8 | Int($1) }
                if size >= 32, i - 4 + size <= bytes.count {
                    found.append(Data(bytes[(i + 12)..<(i + 28)]))
                }
            }
            i += 1
        }
        return found
    }
}
