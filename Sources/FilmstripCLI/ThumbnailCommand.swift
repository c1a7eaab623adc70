import ArgumentParser
import Filmstrip
import Foundation

struct ThumbnailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnail",
        abstract: "Print (and optionally save) the thumbnail a track or grid shows at a time.",
        discussion: """
            The source is told by its content: a WebVTT track, an HLS image playlist or a master that lists image \
            streams, an MPD with thumbnail tiles, a Roku BIF, or storyboard JSON (Mux's or the object array). From \
            a master or an MPD the image track with the largest tiles is used, or the closest to --tile-size.

            Examples:
              filmstrip thumbnail Samples/sprites/thumbnails.vtt --at 42 --output thumb.jpg
              filmstrip thumbnail https://cdn.example/thumbs.vtt --at 42 --json
              filmstrip thumbnail https://cdn.example/show/master.m3u8 --at 42 --tile-size 320x180 --json
              filmstrip thumbnail movie.bif --at 42 --output thumb.jpg
              filmstrip thumbnail --grid 'https://cdn.example/thumbs/$index$_7.jpg' --columns 10 --rows 10 \\
                --duration-ms 10000 --at 42
            """
    )

    @Argument(help: "Path or URL of a thumbnail track in any format, or with --engine frames a video or stream.")
    var track: String?

    @Option(
        help: "tracks (a preview track, the default) or frames (the video's or stream's own keyframes).",
        transform: { text in
            guard text == "tracks" || text == "frames" else {
                throw ValidationError("--engine must be tracks or frames")
            }
            return text
        })
    var engine = "tracks"

    @Option(
        name: .customLong("max-size"), help: "With --engine frames, the largest thumbnail, WxH (default 320x320).",
        transform: { text in
            guard let size = PixelSize(text) else { throw ValidationError("--max-size must be WxH") }
            return size
        })
    var maxSize: PixelSize?

    @Option(
        name: .customLong("tile-size"),
        help: "From a master playlist or an MPD, the image track whose tiles are closest to WxH.",
        transform: { text in
            let parts = text.lowercased().split(separator: "x")
            guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0 else {
                throw ValidationError("--tile-size must be WxH, such as 320x180")
            }
            return PixelSize(width: w, height: h)
        })
    var tileSize: PixelSize?

    @Option(help: "Time in seconds.")
    var at: Double

    @Option(name: .shortAndLong, help: "Write the thumbnail image to this file.")
    var output: String?

    @Option(
        help: "Lookup policy: containing, next or nearest.",
        transform: { text in
            guard let policy = ThumbnailLookupPolicy(rawValue: text) else {
                throw ValidationError("--policy must be containing, next or nearest")
            }
            return policy
        })
    var policy: ThumbnailLookupPolicy = .containing

    @OptionGroup var cache: CacheOptions

    @OptionGroup var network: NetworkOptions

    @Flag(help: "Use only the disk cache; fail (naming the URL) when something is not cached.")
    var offline = false

    @Flag(help: "Skip malformed cues instead of failing.")
    var lenient = false

    @Flag(help: "Print one JSON object on standard output.")
    var json = false

    @Option(help: "Grid template URL containing $index$ (instead of a WebVTT track).")
    var grid: String?

    @Option(help: "Grid columns per sheet.")
    var columns: Int?

    @Option(help: "Grid rows per sheet.")
    var rows: Int?

    @Option(name: .customLong("duration-ms"), help: "Time covered by one grid cell, in milliseconds.")
    var durationMs: Int?

    @Option(
        name: .customLong("max-index"), help: "Number of the last grid sheet (default: from the template's _N suffix).")
    var maxIndex: Int?

    @Option(name: .customLong("first-index"), help: "Number of the first grid sheet: 1 (default) or 0.")
    var firstIndex: Int = 1

    func validate() throws {
        if grid == nil, track == nil { throw ValidationError("give a track path or URL, or --grid") }
        if grid != nil, track != nil { throw ValidationError("give either a track or --grid, not both") }
        if grid != nil, columns == nil || rows == nil || durationMs == nil {
            throw ValidationError("--grid needs --columns, --rows and --duration-ms")
        }
        guard at.isFinite else { throw ValidationError("--at must be a number of seconds") }
    }

    func run() async throws {
        if engine == "frames" { return try await runFrames() }
        var configuration = ThumbnailsConfiguration()
        configuration.loadingMode = .lazy
        configuration.lookupPolicy = policy
        configuration.parsingMode = lenient ? .lenient : .strict
        configuration.cacheDirectory = cache.directory
        configuration.offline = offline
        configuration.preferredTileSize = tileSize
        configuration.loading = network.applied(to: configuration.loading)
        let thumbnails = TrackThumbnails(configuration: configuration)

        let found: Thumbnail?
        do {
            if let grid {
                let definition = try GridThumbnail(
                    baseUrl: resourceURL(grid), gridHeight: rows!, gridWidth: columns!, durationMs: durationMs!,
                    maxIndex: maxIndex, firstIndex: firstIndex)
                try await thumbnails.load(gridThumbnail: definition)
            } else {
                try await thumbnails.load(track: resourceURL(track!))
            }
            found = try await thumbnails.thumbnail(at: at)
        } catch {
            throw fail(error)
        }
        guard let thumbnail = found else {
            printError("no thumbnail covers \(at) s")
            throw ExitStatus.notFound
        }
        var written: String?
        if let output {
            let file = URL(fileURLWithPath: output).standardizedFileURL
            // A track's image is handed on as its server sent it (a BIF's JPEG, a whole sheet): it must decode, or
            // the command would write a broken file and exit 0.
            do { _ = try ImageCodec.decode(Array(thumbnail.imageData)) } catch {
                printError(
                    "the image of the thumbnail at \(at) s (\(thumbnail.sourceURL.absoluteString)) does not decode: \(error)"
                )
                throw ExitStatus.badInput
            }
            do {
                try thumbnail.imageData.write(to: file, options: .atomic)
            } catch {
                printError("cannot write \(file.path): \(error.localizedDescription)")
                throw ExitStatus.badInput
            }
            written = file.path
        }
        if json {
            let region: JSON =
                thumbnail.region.map {
                    .object([("x", .int($0.x)), ("y", .int($0.y)), ("w", .int($0.width)), ("h", .int($0.height))])
                } ?? .null
            let object: JSON = .object([
                ("format", .string(thumbnails.format?.rawValue ?? "webvtt")),
                ("start", .double(thumbnail.timeStampStart)),
                ("end", .double(thumbnail.timeStampEnd)),
                ("image", .string(thumbnail.sourceURL.absoluteString)),
                ("region", region),
                ("bytes", .int(thumbnail.imageData.count)),
                ("output", written.map(JSON.string) ?? .null),
            ])
            print(object.text)
        } else {
            let region = thumbnail.region.map { "region \($0)" } ?? "whole image"
            var line = String(format: "%.3f–%.3f s  ", thumbnail.timeStampStart, thumbnail.timeStampEnd)
            line += "\(thumbnail.sourceURL.absoluteString)  \(region)  "
            line +=
                "\(thumbnail.width)x\(thumbnail.height) \(thumbnail.format.rawValue), \(thumbnail.imageData.count) bytes"
            if let written { line += "  -> \(written)" }
            print(line)
        }
    }

    /// `--engine frames`: the keyframe at or before the time, from an I-frame playlist, the segments or the file's
    /// index.
    private func runFrames() async throws {
        guard let track else { throw ValidationError("--engine frames needs a video or stream") }
        var configuration = FrameThumbnailsConfiguration()
        if let maxSize { configuration.maximumSize = maxSize }
        configuration.loading = network.applied(to: configuration.loading)
        let frames = FrameThumbnails(configuration: configuration)
        let found: Thumbnail?
        do {
            try await frames.load(url: resourceURL(track))
            found = try await frames.thumbnail(at: at)
        } catch {
            throw fail(error)
        }
        guard let thumbnail = found else {
            printError("no keyframe covers \(at) s")
            throw ExitStatus.notFound
        }
        var written: String?
        if let output {
            let file = URL(fileURLWithPath: output).standardizedFileURL
            do { try thumbnail.imageData.write(to: file, options: .atomic) } catch {
                printError("cannot write \(file.path): \(error.localizedDescription)")
                throw ExitStatus.badInput
            }
            written = file.path
        }
        let isLast = thumbnail.timeStampEnd <= thumbnail.timeStampStart || frames.isLastKeyframe(thumbnail)
        if json {
            print(
                JSON.object([
                    ("format", .string("frames")), ("source", .string(frames.source?.rawValue ?? "")),
                    ("image", .string(thumbnail.sourceURL.absoluteString)),
                    ("start", .double(thumbnail.timeStampStart)),
                    ("end", isLast ? .null : .double(thumbnail.timeStampEnd)), ("region", .null),
                    ("bytes", .int(thumbnail.imageData.count)), ("bytes_read", .int(frames.bytesRead)),
                    ("output", written.map(JSON.string) ?? .null),
                ]).text)
        } else {
            print(
                String(format: "%.3f s keyframe", thumbnail.timeStampStart) + " from \(frames.source?.rawValue ?? "")  "
                    + "\(thumbnail.width)x\(thumbnail.height) jpeg, \(thumbnail.imageData.count) bytes, "
                    + "\(frames.bytesRead) bytes read" + (written.map { "  -> \($0)" } ?? ""))
        }
    }
}
