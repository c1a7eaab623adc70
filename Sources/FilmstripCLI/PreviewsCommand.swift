import ArgumentParser
import Filmstrip
import FilmstripSync
import FilmstripWindow
import Foundation

struct PreviewsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "previews",
        abstract: "Serve scrub previews to a player: one long-running process, requests and answers as JSON lines.",
        discussion: """
            Each line on standard input asks for the preview of a source at a time, as raw BGRA pixels written to a \
            file (what mpv's overlay-add shows):
              {"id": 7, "source": "https://cdn.example/show/master.m3u8", "at": 754.2, "width": 320, \\
               "height": 180, "output": "/tmp/preview.bgra"}
            and is answered by one line (on standard output, or appended to --answers):
              {"id": 7, "start": 752.0, "end": 756.0, "width": 320, "height": 180, "stride": 1280, \\
               "output": "/tmp/preview.bgra", "engine": "tracks", "origin": "image-track", "bytes_read": 0, \\
               "milliseconds": 3.1}
            The image fits width x height, keeping its aspect; it is written whole before the answer (a file beside \
            the output, renamed over it). A request that waits behind a newer one for the same output is answered \
            {"id": N, "superseded": true}; a failure {"id": N, "error": "..."}. Sources are opened once and kept: \
            a local file's sidecar SAME-NAME.vtt, else the image track its HLS master or MPD lists, else its own \
            keyframes (an I-frame playlist or the file's keyframe index, one range request per preview). The \
            process exits when standard input ends.
            """
    )

    @Option(help: "Append answers to this file instead of writing them on standard output.")
    var answers: String?

    @Option(
        name: .customLong("max-size"),
        help: "The largest image the .frames engine decodes a keyframe to, WxH (default 320x320).",
        transform: { text in
            guard let size = PixelSize(text) else { throw ValidationError("--max-size must be WxH") }
            return size
        })
    var maxSize: PixelSize?

    @Option(
        help: ArgumentHelp(
            "Keyframes the .frames engine decodes ahead of each preview, in the direction the pointer moves (default 0: "
                + "each preview reads only its own keyframe's bytes).",
            valueName: "N"))
    var prefetch = 0

    @Option(
        name: .customLong("segment-keyframe"),
        help: ArgumentHelp(
            "For a stream without I-frame playlists: first (the segment's first keyframe, the default: only its bytes "
                + "are read, as a player seeking by keyframes shows it) or at-or-before (the keyframe at or before the "
                + "time: the segment is read up to it).",
            valueName: "first|at-or-before"),
        transform: { text in
            guard let choice = SegmentKeyframe(rawValue: text) else {
                throw ValidationError("--segment-keyframe must be first or at-or-before")
            }
            return choice
        })
    var segmentKeyframe = SegmentKeyframe.first

    @OptionGroup var cache: CacheOptions

    @OptionGroup var network: NetworkOptions

    func run() async throws {
        let out: FileHandle
        if let answers {
            let path = URL(fileURLWithPath: answers).standardizedFileURL.path
            if !FileManager.default.fileExists(atPath: path) {
                _ = FileManager.default.createFile(atPath: path, contents: nil)
            }
            guard let handle = FileHandle(forWritingAtPath: path) else {
                printError("cannot write \(path)")
                throw ExitStatus.badInput
            }
            handle.seekToEndOfFile()
            out = handle
        } else {
            out = FileHandle.standardOutput
        }
        var tracks = ThumbnailsConfiguration()
        tracks.loadingMode = .lazy
        tracks.cacheDirectory = cache.directory
        tracks.loading = network.applied(to: tracks.loading)
        var frames = FrameThumbnailsConfiguration()
        if let maxSize { frames.maximumSize = maxSize }
        frames.prefetchCount = max(0, prefetch)
        frames.segmentKeyframe = segmentKeyframe
        frames.loading = network.applied(to: frames.loading)
        let server = PreviewServer(tracks: tracks, frames: frames)
        let inbox = PreviewInbox()
        let reader = Thread {
            while let line = readLine() { inbox.add(line) }
            inbox.close()
        }
        reader.start()
        while let next = await inbox.next() {
            let answer: JSON
            switch next {
            case .request(let request): answer = await server.answer(request)
            case .superseded(let id): answer = .object([("id", id), ("superseded", .bool(true))])
            case .malformed(let message): answer = .object([("id", .null), ("error", .string(message))])
            }
            out.write(Data((answer.text + "\n").utf8))
        }
    }
}

/// One request for a preview.
struct PreviewRequest: Decodable, Sendable {
    var id: Int?
    var source: String
    var at: Double
    var width: Int
    var height: Int
    var output: String
}

/// The requests read from standard input, in order; one that waits behind a newer request for the same output is
/// superseded (a pointer moving over the bar asks faster than a remote keyframe arrives).
final class PreviewInbox: Sendable {
    enum Item: Sendable {
        case request(PreviewRequest)
        case superseded(JSON)
        case malformed(String)
    }

    private let state = Mutex<(queue: [Item], closed: Bool, waiter: CheckedContinuation<Void, Never>?)>(
        ([], false, nil))

    /// Adds a line read from input (called by the reading thread, in input order).
    func add(_ line: String) {
        guard !line.allSatisfy(\.isWhitespace) else { return }
        let item: Item
        do {
            let request = try JSONDecoder().decode(PreviewRequest.self, from: Data(line.utf8))
            guard request.at.isFinite, (1...4096).contains(request.width), (1...4096).contains(request.height) else {
                throw ValidationError("at must be a number of seconds; width and height 1 to 4096")
            }
            item = .request(request)
        } catch {
            item = .malformed("not a preview request: \(error)")
        }
        state.withLock { state in
            state.queue.append(item)
            return state.waiter.take()
        }?.resume()
    }

    /// Input has ended.
    func close() {
        state.withLock { state in
            state.closed = true
            return state.waiter.take()
        }?.resume()
    }

    /// The next item; `nil` once input has ended and every request was taken.
    func next() async -> Item? {
        while true {
            let taken = state.withLock { state -> Item?? in
                guard !state.queue.isEmpty else { return state.closed ? .some(nil) : nil }
                let item = state.queue.removeFirst()
                if case .request(let request) = item,
                    state.queue.contains(where: {
                        if case .request(let later) = $0 { later.output == request.output } else { false }
                    })
                {
                    return .superseded(request.id.map(JSON.int) ?? .null)
                }
                return item
            }
            if let taken { return taken }
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Bool in
                    guard state.queue.isEmpty, !state.closed else { return true }
                    state.waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }
}

/// Opens each source once and answers previews from it.
actor PreviewServer {
    private let tracks: ThumbnailsConfiguration
    private let frames: FrameThumbnailsConfiguration
    private var opened: [String: Opened] = [:]

    private struct Opened {
        var provider: any PreviewProvider
        var origin: String
        var engine: String
    }

    init(tracks: ThumbnailsConfiguration, frames: FrameThumbnailsConfiguration) {
        self.tracks = tracks
        self.frames = frames
    }

    func answer(_ request: PreviewRequest) async -> JSON {
        let id = request.id.map(JSON.int) ?? .null
        let clock = ContinuousClock()
        let started = clock.now
        do {
            let source = try await open(request.source)
            let before = (source.provider as? FrameThumbnails)?.bytesRead ?? 0
            guard let thumbnail = try await source.provider.thumbnail(at: request.at) else {
                return .object([("id", id), ("error", .string("no preview covers \(request.at) s"))])
            }
            let (image, _) = try ImageCodec.decode(thumbnail.imageData)
            let fit = min(Double(request.width) / Double(image.width), Double(request.height) / Double(image.height))
            let width = max(1, Int((Double(image.width) * fit).rounded()))
            let height = max(1, Int((Double(image.height) * fit).rounded()))
            let scaled = try image.scaled(width: width, height: height)
            try Self.writeBGRA(scaled, to: URL(fileURLWithPath: request.output))
            let after = (source.provider as? FrameThumbnails)?.bytesRead ?? 0
            let elapsed = clock.now - started
            let milliseconds =
                Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
            return .object([
                ("id", id), ("start", .double(thumbnail.timeStampStart)),
                ("end", .double(max(thumbnail.timeStampStart, thumbnail.timeStampEnd))), ("width", .int(width)),
                ("height", .int(height)), ("stride", .int(width * 4)), ("output", .string(request.output)),
                ("engine", .string(source.engine)), ("origin", .string(source.origin)),
                ("bytes_read", .int(after - before)), ("milliseconds", .double((milliseconds * 10).rounded() / 10)),
            ])
        } catch {
            return .object([("id", id), ("error", .string("\(error)"))])
        }
    }

    /// The source's previews: a sidecar `.vtt` beside a local file, a track given directly, the image track a
    /// manifest lists, else the keyframes.
    private func open(_ argument: String) async throws -> Opened {
        if let known = opened[argument] { return known }
        let url = resourceURL(argument)
        let found = try await Self.provider(for: url, tracks: tracks, frames: frames)
        opened[argument] = found
        return found
    }

    private static func provider(
        for url: URL, tracks: ThumbnailsConfiguration, frames: FrameThumbnailsConfiguration
    ) async throws -> Opened {
        let trackExtensions: Set = ["vtt", "bif", "json"]
        let direct = trackExtensions.contains(url.pathExtension.lowercased())
        var sidecar = direct ? url : nil
        if url.isFileURL, !direct, !ManifestDetection.isManifest(url) {
            let beside = url.deletingPathExtension().appendingPathExtension("vtt")
            if FileManager.default.fileExists(atPath: beside.path) { sidecar = beside }
        }
        let previews = try await ScrubPreviews.load(url: url, sidecar: sidecar, tracks: tracks, frames: frames)
        switch previews.source {
        case .sidecar:
            return Opened(provider: previews.provider, origin: direct ? "track" : "sidecar", engine: "tracks")
        case .imageTrack: return Opened(provider: previews.provider, origin: "image-track", engine: "tracks")
        case .frames:
            let origin = (previews.provider as? FrameThumbnails)?.source?.rawValue ?? "frames"
            return Opened(provider: previews.provider, origin: origin, engine: "frames")
        }
    }

    /// Writes the pixels as BGRA (opaque) to a file beside `url`, then renames it over `url`: a reader never sees
    /// half an image.
    private static func writeBGRA(_ image: PixelBuffer, to url: URL) throws {
        let channels = image.layout.channels
        var bgra = [UInt8](repeating: 255, count: image.width * image.height * 4)
        image.bytes.withUnsafeBufferPointer { source in
            for pixel in 0..<(image.width * image.height) {
                let s = pixel * channels
                let d = pixel * 4
                bgra[d] = source[s + 2]
                bgra[d + 1] = source[s + 1]
                bgra[d + 2] = source[s]
            }
        }
        let partial = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).partial")
        try Data(bgra).write(to: partial)
        guard rename(partial.path, url.path) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
    }
}
