import ArgumentParser
import Filmstrip
import FilmstripServer
import Foundation
import Logging

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a library page of the videos under folders, with a scrub-preview watch page for each.",
        discussion: """
            Every video under the folders (searched recursively) is listed at / with a poster, its name and its \
            duration; /watch/<path> plays it with a scrub bar that shows the preview thumbnail under the pointer. \
            A preview track beside a video (same base name: .vtt, .bif, .json, .m3u8 or .mpd) is used; otherwise \
            one is generated on the first view and kept in --cache-dir, so the folders are never written to. \
            Only files under the folders are served.

            API: /api/track?src=PATH (cues as JSON), /api/progress?src=PATH (server-sent events of the \
            generation), /api/thumbnail?src=PATH&t=SECONDS (the image), /api/image?src=PATH&i=N (a sheet), \
            /api/status (generation counters), /media/PATH (the video, with Range).

            The server listens on 127.0.0.1 (this machine only) unless --host says otherwise. Stop it with Ctrl-C.

            Example:
              filmstrip serve ~/Movies --port 8080
            """
    )

    @Argument(help: "Folders of videos (default: the current folder).")
    var folders: [String] = []

    @Option(help: "Address to listen on. Anything but 127.0.0.1, ::1 or localhost exposes the library to the network.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on (0 picks a free one).")
    var port = 8080

    @Option(name: .customLong("cache-dir"), help: "Where generated tracks are kept (default ~/.cache/filmstrip/serve).")
    var cacheDirectory: String?

    @Option(help: "How many tracks are generated at once.")
    var parallel = 2

    @Option(
        name: .customLong("signing-key"),
        help: ArgumentHelp(
            "A public key that signs image URLs: KID=PATH, an RSA public key in PEM (repeatable). Tokens (RS256 JWTs "
                + "in ?token=) naming KID are checked with it.", valueName: "KID=PATH"))
    var signingKeys: [String] = []

    @Flag(help: "Refuse image URLs without a valid token (403). Needs --signing-key.")
    var requireSigned = false

    @Option(
        help: ArgumentHelp(
            "A file of remote streams given image URLs: a line per stream, ID URL (an http or https HLS playlist or "
                + "DASH MPD); blank lines and lines starting with # are skipped.", valueName: "FILE"))
    var streams: String?

    @Flag(
        help: ArgumentHelp(
            "Let the server fetch from loopback, link-local and private addresses (refused by default: a remote "
                + "stream on such an address gets 403)."))
    var allowPrivateAddresses = false

    @OptionGroup var previews: OnDemandPreviewOptions

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
        guard parallel >= 1 else { throw ValidationError("--parallel must be at least 1") }
        for key in signingKeys {
            let parts = key.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw ValidationError("--signing-key takes KID=PATH, not \(key)")
            }
        }
        if requireSigned, signingKeys.isEmpty { throw ValidationError("--require-signed needs a --signing-key") }
    }

    /// A streams list: `ID URL` per line; blank lines and `#` comments skipped.
    static func readStreams(_ text: String, file: String) throws -> [(id: String, url: URL)] {
        var streams: [(id: String, url: URL)] = []
        for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, !trimmed.hasPrefix("#") else { continue }
            let fields = trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count == 2, let url = URL(string: String(fields[1])) else {
                throw ValidationError("\(file), line \(n + 1): expected ID URL, got \(trimmed.prefix(200))")
            }
            streams.append((String(fields[0]), url))
        }
        return streams
    }

    func run() async throws {
        let directories = (folders.isEmpty ? ["."] : folders).map { URL(fileURLWithPath: $0, isDirectory: true) }
        var configuration = ServerConfiguration(libraries: directories)
        configuration.host = host
        configuration.port = port
        configuration.maximumParallelGenerations = parallel
        configuration.trackOptions = previews.applied(to: configuration.trackOptions)
        if let cacheDirectory { configuration.cacheDirectory = URL(fileURLWithPath: cacheDirectory, isDirectory: true) }
        for key in signingKeys {
            let parts = key.split(separator: "=", maxSplits: 1).map(String.init)
            do {
                configuration.signingKeys[parts[0]] = try String(contentsOfFile: parts[1], encoding: .utf8)
            } catch {
                throw fail(ServerError(status: 500, "cannot read the signing key \(parts[1])", underlying: error))
            }
        }
        configuration.requiresSignedURLs = requireSigned
        configuration.allowsPrivateAddresses = allowPrivateAddresses
        if let streams {
            do {
                configuration.remoteStreams = try Self.readStreams(
                    try String(contentsOfFile: streams, encoding: .utf8), file: streams)
            } catch let error as ValidationError {
                throw fail(ServerError(status: 400, error.message))
            } catch {
                throw fail(ServerError(status: 500, "cannot read the streams list \(streams)", underlying: error))
            }
        }
        let server: LibraryServer
        do {
            var logger = Logger(label: "filmstrip.serve")
            logger.logLevel = .notice
            server = try LibraryServer(configuration: configuration, logger: logger)
        } catch {
            throw fail(error)
        }
        let local = configuration.bindsLoopback
        do {
            try await server.run { url in
                var lines = ["Filmstrip is serving \(directories.map(\.path).joined(separator: ", "))", "  \(url)"]
                if !local {
                    lines.append("  Listening on \(host): other machines can reach this library.")
                }
                // Written straight to the descriptor, so a script reading the URL sees it at once.
                FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
            }
        } catch {
            throw fail(error)
        }
    }
}
