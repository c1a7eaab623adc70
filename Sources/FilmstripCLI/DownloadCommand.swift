import ArgumentParser
import Filmstrip
import Foundation

struct DownloadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "download",
        abstract: "Download an HLS or DASH stream (video on demand) into a folder that plays offline.",
        discussion: """
            Takes one video rendition (the highest bandwidth within --max-height and --max-bandwidth, else the \
            smallest), the default audio track (or those --audio names), and the stream's preview track (its image \
            track, else its I-frame playlist). Files are fetched --concurrency at a time; each is verified (length, \
            and a SHA-256 kept in DIR/journal) before it is named. DIR/master.m3u8 (HLS, whatever the source's \
            format) names only verified files; previews are DIR/previews/thumbnails.vtt. Run the same command again \
            after an interruption (even kill -9): verified files are not fetched again. Live streams are refused.

            For a stream protected with Common Encryption, --key or --license-url get its keys, stored in \
            DIR/license.json (owner-only); `filmstrip play DIR` restores them.

            Example:
              filmstrip download https://example.com/master.m3u8 --output film --max-height 720 --audio en,fr
            """
    )

    @Argument(help: "URL (or path) of an HLS master or media playlist, or a DASH MPD.")
    var source: String

    @Option(name: .shortAndLong, help: "Folder to download into (new or empty, or an earlier run's to resume).")
    var output: String

    @Option(help: "The tallest video rendition to take, in pixels.")
    var maxHeight: Int?

    @Option(help: "The most bits per second the video rendition may declare.")
    var maxBandwidth: Int?

    @Option(
        help: "Audio languages to take, comma-separated (en takes en-GB too), or none (default: the default track).")
    var audio: String?

    @Flag(inversion: .prefixedNo, help: "Take the stream's preview track (image track, else I-frame playlist).")
    var previews = true

    @Option(help: "Files fetched at once.")
    var concurrency = 4

    @Option(help: "Seconds a request may take before it is retried.")
    var timeout: Double = 30

    @OptionGroup var keys: KeyOptions
    @OptionGroup var network: NetworkOptions

    @Flag(help: "Print a JSON summary on standard output.")
    var json = false

    func validate() throws {
        guard (1...32).contains(concurrency) else { throw ValidationError("--concurrency must be 1 to 32") }
        if let maxHeight, maxHeight <= 0 { throw ValidationError("--max-height must be positive") }
        if let maxBandwidth, maxBandwidth <= 0 { throw ValidationError("--max-bandwidth must be positive") }
        guard timeout > 0, timeout <= 3600 else { throw ValidationError("--timeout must be above 0, at most 3600") }
    }

    func run() async throws {
        var choice = DownloadConfiguration()
        choice.maximumHeight = maxHeight
        choice.maximumBandwidth = maxBandwidth
        choice.previews = previews
        choice.concurrency = concurrency
        if let audio {
            choice.audioLanguages =
                audio.lowercased() == "none"
                ? [] : audio.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        var loading = network.applied(to: LoadingConfiguration(maximumResponseSize: 256 << 20))
        loading.requestTimeout = timeout
        let directory = URL(fileURLWithPath: output, isDirectory: true).standardizedFileURL
        let downloader = Downloader(
            url: resourceURL(source), directory: directory, configuration: choice, loading: loading,
            contentKeys: keys.keys, license: keys.license(policy: network.policy))
        let bar = ProgressBar(label: "download")
        let watcher = Task {
            for await progress in downloader.progress {
                bar.update(progress.files, of: progress.totalFiles, detail: Self.detail(progress))
            }
        }
        let download: Download
        do {
            download = try await downloader.run()
        } catch {
            _ = await watcher.value
            bar.clear()
            throw fail(error)
        }
        _ = await watcher.value
        if let failure = download.licenseFailure {
            printError("the licence server the manifest names gave no licence: \(failure)")
        }
        if json {
            print(
                JSON.object([
                    ("manifest", .string(download.manifestURL.path)),
                    ("previews", download.previewTrackURL.map { .string($0.path) } ?? .null),
                    ("iframes", download.iFramePlaylistURL.map { .string($0.path) } ?? .null),
                    ("license", download.licenseFile.map { .string($0.path) } ?? .null),
                    ("key_ids", .array(download.keyIDs.map { .string(ContentKeys.hex($0)) })),
                    ("files", .int(download.files)), ("bytes", .int(Int(download.bytes))),
                    ("duration", .double(download.duration)),
                ]).text)
        } else {
            var line = "\(download.manifestURL.path): \(download.files) files, \(Self.megabytes(download.bytes))"
            if download.previewTrackURL != nil { line += ", previews" }
            if download.isProtected { line += download.licenseFile == nil ? ", protected (no licence)" : ", licence" }
            print(line)
        }
    }

    static func megabytes(_ bytes: Int64) -> String {
        bytes < 100_000
            ? String(format: "%.1f kB", Double(bytes) / 1000) : String(format: "%.1f MB", Double(bytes) / 1_000_000)
    }

    static func detail(_ progress: DownloadProgress) -> String {
        var text = " \(megabytes(progress.bytes)) of ~\(megabytes(progress.estimatedBytes))"
        if progress.bytesPerSecond > 0 { text += String(format: ", %.1f MB/s", progress.bytesPerSecond / 1e6) }
        if let left = progress.estimatedTimeLeft { text += ", \(Int(left.rounded())) s left" }
        return text
    }
}
