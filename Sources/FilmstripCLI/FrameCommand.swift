import ArgumentParser
import Filmstrip
import Foundation

struct FrameCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "frame",
        abstract: "Extract one frame from a video (file, http(s) URL or HLS playlist).",
        discussion: """
            By default the keyframe at or before the time is used (fastest); --exact decodes up to the frame \
            shown at that time. The image format follows the output's extension (.png, .webp, else JPEG). With --json \
            the time of the frame actually used and the bytes read are printed.

            Example:
              filmstrip frame https://cdn.example.com/movie.mp4 --at 754 --max-size 640x360 --output poster.jpg
            """
    )

    @Argument(help: "Path or URL of the video.")
    var video: String

    @Option(help: "Time in seconds.")
    var at: Double

    @Option(
        name: .shortAndLong, help: "Write the image to this file (.png for PNG, .webp for WebP, anything else JPEG).")
    var output: String?

    @Option(
        name: .customLong("max-size"), help: "Largest output size, WxH; the aspect ratio is kept.",
        transform: { text in
            guard let size = PixelSize(text) else { throw ValidationError("--max-size must look like 640x360") }
            return size
        })
    var maxSize: PixelSize?

    @Flag(help: "The exact frame at the time instead of the keyframe at or before it.")
    var exact = false

    @Flag(help: "Print one JSON object on standard output.")
    var json = false

    @OptionGroup var network: NetworkOptions

    @OptionGroup var keys: KeyOptions

    func run() async throws {
        var options = exact ? FrameExtractorConfiguration.exact : FrameExtractorConfiguration()
        options.maximumSize = maxSize
        options.contentKeys = keys.keys
        options.license = keys.license(policy: network.policy)
        options.loading = network.applied(to: options.loading)
        let extractor = FrameExtractor(url: resourceURL(video), options: options)
        let frame: VideoFrame
        do {
            frame = try await extractor.image(at: at)
        } catch let error as MediaError where error.kind == .timeOutOfRange {
            printError(error.description)
            throw ExitStatus.notFound
        } catch {
            throw fail(error)
        }
        var written: String?
        var encodedBytes: Int?
        if let output {
            let file = URL(fileURLWithPath: output).standardizedFileURL
            let format = ImageFormat(fileExtension: file.pathExtension) ?? .jpeg
            do {
                let bytes = try ImageCodec.encode(frame.image, as: format, quality: 90)
                try Data(bytes).write(to: file, options: .atomic)
                encodedBytes = bytes.count
            } catch {
                printError("cannot write \(file.path): \(error)")
                throw ExitStatus.badInput
            }
            written = file.path
        }
        if json {
            print(
                JSON.object([
                    ("requested", .double(at)),
                    ("time", .double((frame.actualTime * 1_000_000).rounded() / 1_000_000)),
                    ("keyframe", .bool(frame.isKeyframe)),
                    ("width", .int(frame.image.width)),
                    ("height", .int(frame.image.height)),
                    ("bytes_read", .int(extractor.bytesRead)),
                    ("output", written.map(JSON.string) ?? .null),
                    ("bytes", encodedBytes.map(JSON.int) ?? .null),
                ]).text)
        } else {
            var line = String(format: "frame at %.3f s (asked %.3f s)", frame.actualTime, at)
            line += frame.isKeyframe ? ", keyframe" : ""
            line += ", \(frame.image.width)x\(frame.image.height), \(extractor.bytesRead) bytes read"
            if let written { line += " -> \(written)" }
            print(line)
        }
    }
}
