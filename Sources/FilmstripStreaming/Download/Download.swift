import FilmstripFormats
public import Foundation

/// A finished download: a folder that plays offline. `master.m3u8` (HLS, whatever the source's format) names only
/// files stored and verified; `previews/thumbnails.vtt` is the stream's preview track over the stored images; a
/// protected stream's keys, when they were given or licensed, are kept in `license.json`, readable by the owner only.
///
/// ```swift
/// let download = try Download(at: URL(fileURLWithPath: "Downloads/film"))
/// let configuration = PlayerConfiguration(with: download)  // FilmstripPlayer: its keys restored
/// ```
public struct Download: Sendable, Hashable {
    /// The folder.
    public var directory: URL
    /// The stream it was downloaded from.
    public var sourceURL: URL
    /// The local master playlist.
    public var manifestURL: URL
    /// The stored preview track (WebVTT over stored images), when the stream had one.
    public var previewTrackURL: URL?
    /// The stored I-frame playlist, when the stream had one and no image track.
    public var iFramePlaylistURL: URL?
    /// The key ids of a protected stream (empty when it is clear).
    public var keyIDs: [Data]
    /// The stored licence (the keys of ``keyIDs``), when there is one.
    public var licenseFile: URL?
    /// Why the licence server the manifest names gave no licence, when it was asked and failed.
    public var licenseFailure: String?
    /// Files stored.
    public var files: Int
    /// Bytes stored.
    public var bytes: Int64
    /// Seconds of media.
    public var duration: Double

    static let recordName = "download.json"
    static let licenseName = "license.json"

    /// Opens the download in `directory` (one a ``Downloader`` finished).
    ///
    /// - Throws: ``DownloadError`` `.conflict` when the folder holds no finished download, `.corrupt` when its record
    ///   does not read.
    public init(at directory: URL) throws {
        let recordURL = directory.appendingPathComponent(Self.recordName)
        guard let data = try? Data(contentsOf: recordURL) else {
            throw DownloadError(.conflict, "\(directory.path) holds no finished download (no \(Self.recordName))")
        }
        let record: DownloadRecord
        do {
            record = try JSONDecoder().decode(DownloadRecord.self, from: data)
        } catch {
            throw DownloadError(.corrupt, "\(recordURL.path) does not read: \(error)", underlying: error)
        }
        guard record.version == 1, let source = URL(string: record.source),
            ([record.manifest] + [record.previews, record.iFrames, record.license].compactMap { $0 })
                .allSatisfy(DownloadStore.isSafe)
        else {
            throw DownloadError(.corrupt, "\(recordURL.path) is not a download record this version reads")
        }
        self.directory = directory
        sourceURL = source
        manifestURL = directory.appendingPathComponent(record.manifest)
        previewTrackURL = record.previews.map { directory.appendingPathComponent($0) }
        iFramePlaylistURL = record.iFrames.map { directory.appendingPathComponent($0) }
        keyIDs = record.keyIDs.compactMap { StreamProtection.keyID($0) }
        licenseFile = record.license.map { directory.appendingPathComponent($0) }
        licenseFailure = record.licenseFailure
        files = record.files
        bytes = record.bytes
        duration = record.duration
    }

    /// The download that `url` (its folder, or its master playlist) is, if it is one.
    public static func containing(_ url: URL) -> Download? {
        guard url.isFileURL else { return nil }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else { return nil }
        let folder = isDirectory.boolValue ? url : url.deletingLastPathComponent()
        guard let download = try? Download(at: folder) else { return nil }
        return isDirectory.boolValue || download.manifestURL.standardizedFileURL == url.standardizedFileURL
            ? download : nil
    }

    /// Whether the stream is protected (Common Encryption).
    public var isProtected: Bool { !keyIDs.isEmpty }

    /// The keys of the stored licence (empty when there is none).
    ///
    /// - Throws: ``DownloadError`` `.corrupt` when the licence does not read.
    public func contentKeys() throws -> ContentKeys {
        guard let licenseFile else { return ContentKeys() }
        do {
            return try ClearKeyLicense.parse(try Data(contentsOf: licenseFile))
        } catch {
            throw DownloadError(.corrupt, "the licence \(licenseFile.path) does not read: \(error)", underlying: error)
        }
    }

    /// Reads every stored file again and compares it with its journal entry (length and SHA-256); the paths that
    /// differ or are missing. Empty when the download is intact.
    public func verify() throws -> [String] {
        let journal = directory.appendingPathComponent(DownloadStore.journalName)
        guard let text = try? String(contentsOf: journal, encoding: .utf8) else {
            throw DownloadError(.corrupt, "\(journal.path) does not read")
        }
        let entries = Dictionary(
            text.split(separator: "\n").dropFirst().compactMap { DownloadStore.entry($0) }, uniquingKeysWith: { $1 })
        return entries.keys.sorted().filter { path in
            guard let data = try? Data(contentsOf: directory.appendingPathComponent(path)) else { return true }
            return Int64(data.count) != entries[path]!.length || DownloadStore.sha256(data) != entries[path]!.sha256
        }
    }
}

/// `download.json`: what a finished download holds.
struct DownloadRecord: Codable, Sendable {
    var version = 1
    var source: String
    var manifest: String
    var previews: String?
    var iFrames: String?
    var license: String?
    var keyIDs: [String]
    var licenseFailure: String?
    var files: Int
    var bytes: Int64
    var duration: Double
}
