import ArgumentParser
import Filmstrip
import FilmstripSync
import Foundation

struct GalleryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gallery",
        abstract: "Write one thumbnail per video, and a contact sheet of them all.",
        discussion: """
            Writes DIR/NN-<name>.jpg for each input (files, http(s) URLs, HLS playlists), loading a few at a \
            time, and DIR/gallery.jpg. Inputs that fail are reported; the others are still written (exit 2 if any \
            failed).

            Example:
              filmstrip gallery clips/*.mp4 https://cdn.example.com/live/index.m3u8 --output gallery --json
            """
    )

    @Argument(help: "Paths or URLs of the videos.")
    var videos: [String]

    @Option(name: .shortAndLong, help: "Directory to write the thumbnails and gallery.jpg to.")
    var output: String

    @Option(
        name: .customLong("max-size"), help: "Largest thumbnail size, WxH.",
        transform: { text in
            guard let size = PixelSize(text) else { throw ValidationError("--max-size must look like 320x180") }
            return size
        })
    var maxSize: PixelSize = PixelSize(width: 320, height: 180)

    @Option(help: "Time of the frame to show, in seconds (the keyframe at or before it).")
    var at: Double = 0

    @Flag(help: "Among the first keyframes, show the first that is neither black, uniform nor blurred.")
    var representative = false

    @Option(help: "Videos loaded at once.")
    var concurrency: Int = 4

    @Flag(help: "Print one JSON object on standard output.")
    var json = false

    @OptionGroup var network: NetworkOptions

    func validate() throws {
        if videos.isEmpty { throw ValidationError("give at least one video") }
    }

    func run() async throws {
        let directory = URL(fileURLWithPath: output, isDirectory: true).standardizedFileURL
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            printError("cannot create \(directory.path): \(error.localizedDescription)")
            throw ExitStatus.badInput
        }
        var configuration = VideoThumbnailLoaderConfiguration()
        configuration.maximumSize = maxSize
        configuration.time = at
        if representative { configuration.posterChoice = .representative }
        configuration.maximumConcurrentLoads = concurrency
        configuration.cacheDirectory = nil
        configuration.loading = network.applied(to: configuration.loading)
        let loader = VideoThumbnailLoader(configuration: configuration)
        let started = Date()
        let inputs = videos.map(resourceURL)
        let bar = ProgressBar(label: "videos")
        let results = await withTaskGroup(of: Indexed<Result<VideoThumbnail, any Error>>.self) { group in
            for (index, url) in inputs.enumerated() {
                group.addTask {
                    do { return Indexed(index, .success(try await loader.thumbnail(for: url))) } catch {
                        return Indexed(index, .failure(error))
                    }
                }
            }
            var results = [Result<VideoThumbnail, any Error>?](repeating: nil, count: inputs.count)
            var done = 0
            for await child in group {
                results[child.index] = child.value
                done += 1
                bar.update(done, of: inputs.count)
            }
            return results.map { $0! }
        }
        var entries: [JSON] = []
        var images: [PixelBuffer?] = []
        var failures = 0
        for (index, result) in results.enumerated() {
            let input = inputs[index]
            switch result {
            case .success(let thumbnail):
                let name = String(format: "%02d-", index + 1) + Self.stem(of: input) + ".jpg"
                let file = directory.appendingPathComponent(name)
                do {
                    try thumbnail.imageData.write(to: file, options: .atomic)
                    images.append(try ImageCodec.decode(thumbnail.imageData).0)
                } catch {
                    printError("cannot write \(file.path): \(error)")
                    throw ExitStatus.badInput
                }
                entries.append(
                    .object([
                        ("input", .string(videos[index])), ("output", .string(file.path)),
                        ("time", thumbnail.time.map(JSON.double) ?? .null), ("width", .int(thumbnail.width)),
                        ("height", .int(thumbnail.height)),
                    ]))
                if !json { print("\(videos[index]) -> \(name) (\(thumbnail.width)x\(thumbnail.height))") }
            case .failure(let error):
                failures += 1
                images.append(nil)
                entries.append(.object([("input", .string(videos[index])), ("error", .string("\(error)"))]))
                printError("\(videos[index]): \(error)")
            }
        }
        let sheetURL = directory.appendingPathComponent("gallery.jpg")
        do {
            let sheet = ContactSheet.render(images)
            try Data(try ImageCodec.encode(sheet, as: .jpeg, quality: 85)).write(to: sheetURL, options: .atomic)
        } catch {
            printError("cannot write \(sheetURL.path): \(error)")
            throw ExitStatus.badInput
        }
        if json {
            print(
                JSON.object([
                    ("videos", .array(entries)), ("contact_sheet", .string(sheetURL.path)),
                    ("failed", .int(failures)),
                    ("seconds", .double((Date().timeIntervalSince(started) * 1000).rounded() / 1000)),
                ]).text)
        } else {
            print("contact sheet -> \(sheetURL.path)")
        }
        if failures > 0 { throw ExitStatus.badInput }
    }

    /// A file-name-safe stem for an input.
    static func stem(of url: URL) -> String {
        var name = url.deletingPathExtension().lastPathComponent
        if name.isEmpty || name == "/" { name = url.host ?? "video" }
        let allowed = name.unicodeScalars.map {
            CharacterSet.alphanumerics.contains($0) || "-_".unicodeScalars.contains($0) ? Character($0) : "_"
        }
        return String(String(allowed).prefix(40))
    }
}
