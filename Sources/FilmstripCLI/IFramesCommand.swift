import ArgumentParser
import Filmstrip
import Foundation

struct IFramesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "iframes",
        abstract: "Write HLS I-frame playlists (and a master with EXT-X-I-FRAME-STREAM-INF) for an HLS stream.",
        discussion: """
            For a master playlist: DIR/master.m3u8 (the master, its URIs pointing at the original playlists, plus \
            one EXT-X-I-FRAME-STREAM-INF per video rendition) and one I-frame playlist per rendition; for a media \
            playlist: DIR/NAME-iframes.m3u8. Every entry is the byte range of one keyframe in the original segment, \
            with an EXT-X-MAP for what a demuxer needs first (PAT/PMT for MPEG-TS, the init section for fMP4), so \
            each range with its map decodes on its own. Local sources get relative paths, remote ones absolute URLs.

            Example:
              filmstrip iframes stream/master.m3u8 --output stream --json
            """
    )

    @Argument(help: "Path or URL of an HLS master or media playlist.")
    var source: String

    @Option(name: .shortAndLong, help: "Directory to write the playlists to.")
    var output: String

    @Flag(help: "Print a JSON summary on standard output.")
    var json = false

    func run() async throws {
        let directory = URL(fileURLWithPath: output, isDirectory: true).standardizedFileURL
        let summary: IFramePlaylistSummary
        do {
            summary = try await IFramePlaylistGenerator.generate(from: resourceURL(source), to: directory)
        } catch {
            throw fail(error)
        }
        if json {
            print(
                JSON.object([
                    ("files", .array(summary.files.map { JSON.string($0.path) })),
                    ("master", summary.master.map { JSON.string($0.path) } ?? .null),
                    (
                        "playlists",
                        .array(
                            summary.playlists.map {
                                .object([
                                    ("file", .string($0.url.path)), ("source", .string($0.source.absoluteString)),
                                    ("entries", .int($0.entries)), ("bandwidth", .int($0.bandwidth)),
                                    ("average_bandwidth", .int($0.averageBandwidth)),
                                ])
                            })
                    ),
                ]).text)
        } else {
            for playlist in summary.playlists {
                print("\(playlist.url.path): \(playlist.entries) keyframes, \(playlist.bandwidth / 1000) kbit/s peak")
            }
            if let master = summary.master { print("\(master.path)") }
        }
    }
}
