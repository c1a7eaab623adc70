import FilmstripFormats
import FilmstripMedia
import FilmstripStreaming
import Foundation

/// `--attach`: the stream's own manifest written again with the preview tracks added, beside the tracks, after
/// checking that nothing written would land on the stream's own files.
enum ManifestAttachment {
    /// The name of the stream's manifest with the tracks added, per protocol.
    static func attachedName(_ streamingProtocol: Presentation.StreamingProtocol) -> String {
        streamingProtocol == .hls ? "master.m3u8" : "manifest.mpd"
    }

    /// Refuses an attachment that would write over any file of the stream: its manifest, a playlist or segment it
    /// names, or an image track it has (a stream whose own image playlist is `thumbnails.m3u8`, or whose MPD names
    /// `sprite-$Number$.jpg`, in the output directory). Nothing is written before this check.
    static func checkAttachment(
        input: URL, directory: URL, streamingProtocol: Presentation.StreamingProtocol,
        options: PreviewTrackConfiguration
    ) throws(MediaError) {
        guard input.isFileURL else { return }
        let folders =
            [directory]
            + options.additionalWidths.filter { $0 != options.width }.map {
                directory.appendingPathComponent("w\($0)", isDirectory: true)
            }
        var names: [String] = [directory.appendingPathComponent(attachedName(streamingProtocol)).path]
        for folder in folders {
            for name in [
                options.trackName, "thumbnails.m3u8", "thumbnails.mpd", "thumbnails.json", "thumbnails.bif",
                "storyboard.json", "storyboard." + options.imageFormat.fileExtension,
                ImageIFrameSequence.playlistName, ImageIFrameSequence.mediaName,
            ] {
                names.append(folder.appendingPathComponent(name).path)
            }
            for n in 1...3 { names.append(folder.appendingPathComponent(options.sheetName(n)).path) }
        }
        // In the order written (the manifest, the track files, the sheets), so the message names the first clash.
        let planned = names.map { URL(fileURLWithPath: $0).standardizedFileURL.resolvingSymlinksInPath().path }
        let stream = streamFiles(input)
        for path in planned {
            let hit =
                stream.paths.contains(path)
                || stream.templates.contains {
                    $0.firstMatch(in: path, range: NSRange(path.startIndex..., in: path)) != nil
                }
            if hit {
                throw MediaError(
                    .invalidArgument,
                    "--output \(directory.path) holds the stream's own \(URL(fileURLWithPath: path).lastPathComponent), "
                        + "which the tracks would write over; write them to another directory", url: input)
            }
        }
    }

    /// The local files a stream is made of: its manifest, what it names (and, for HLS, what the playlists it names
    /// name), and (DASH) the templates its segments follow, as patterns.
    private static func streamFiles(_ manifest: URL) -> (paths: Set<String>, templates: [NSRegularExpression]) {
        func normal(_ path: String) -> String {
            URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
        }
        var paths: Set<String> = [normal(manifest.path)]
        var templates: [NSRegularExpression] = []
        guard let parsed = try? ParsedManifest(contentsOf: manifest) else { return (paths, templates) }
        let named = parsed.referencedFiles(includingRanged: true)
        paths.formUnion(named.map(normal))
        switch parsed {
        case .hls:
            // A master's media playlists, and what they name.
            for playlist in named
            where ManifestDetection.kind(ofExtension: (playlist as NSString).pathExtension) == .hls {
                let files = (try? ParsedManifest(contentsOf: URL(fileURLWithPath: playlist)))?
                    .referencedFiles(includingRanged: true)
                paths.formUnion((files ?? []).map(normal))
            }
        case .dash(let presentation):
            // A template's segments ($Number$, $Time$ and the like stand for any run of characters without a slash).
            for case .template(let template) in presentation.periods.flatMap(\.tracks).flatMap(\.renditions).map(
                \.segments)
            where template.baseURL.isFileURL {
                // The folder the template's names are relative to (the base URL names a folder or a file in it).
                let base = URL(string: "x", relativeTo: template.baseURL)?.absoluteURL ?? template.baseURL
                let folder = normal(base.deletingLastPathComponent().path)
                for name in [template.media] + (template.initialization.map { [$0] } ?? [])
                where name.contains("$") && !name.contains("://") {
                    var pattern = ""
                    var inside = false
                    for part in name.split(separator: "$", omittingEmptySubsequences: false) {
                        pattern += inside ? "[^/]*" : NSRegularExpression.escapedPattern(for: String(part))
                        inside.toggle()
                    }
                    let full = "^" + NSRegularExpression.escapedPattern(for: folder + "/") + pattern + "$"
                    if let expression = try? NSRegularExpression(pattern: full) { templates.append(expression) }
                }
            }
        }
        return (paths, templates)
    }

    /// Writes the stream's own manifest with the image tracks of `summary` (every width) added, atomically, after
    /// every other file; returns where.
    static func attach(
        _ summary: PreviewTrackSummary, stream: StreamFrames, timeline: MediaTimeline,
        displaySize: (width: Int, height: Int), directory: URL, sheetTemplate: String
    ) async throws(MediaError) -> URL {
        let presentation = timeline.presentation
        let bytes: Data
        do {
            bytes = try await stream.client.manifestBytes()
        } catch {
            throw StreamFrames.mediaError(error, url: stream.url)
        }
        let widths = [(summary, "")] + summary.otherWidths.map { ($0, "w\($0.tileSize.width)/") }
        let text: String
        do {
            switch presentation.streamingProtocol {
            case .hls:
                let images = widths.compactMap { width, folder in
                    width.layout.map {
                        StreamAttachment.ImageStream(
                            line: PreviewTrackWriter.imageStreamInf(
                                $0, uri: folder + "thumbnails.m3u8", sheetBytes: width.sheetBytes))
                    }
                }
                // The I-frame image sequences after the image playlists, one per width.
                let iFrames = widths.compactMap { width, folder in
                    width.iFrameImageStream.map {
                        StreamAttachment.ImageStream(line: $0.line(uri: folder + ImageIFrameSequence.playlistName))
                    }
                }
                let lines = images + iFrames
                let rendition = timeline.renditions.first
                let seconds = max(0.001, presentation.duration ?? timeline.end)
                let wrapping = StreamAttachment.WrappedVariant(
                    bandwidth: rendition.map(\.bandwidth).flatMap { $0 > 0 ? $0 : nil }
                        ?? Int((Double(summary.bytesRead) * 8 / seconds).rounded(.up)),
                    resolution: PixelSize(width: displaySize.width, height: displaySize.height),
                    codecs: rendition?.codecs)
                text = try StreamAttachment.hlsMaster(
                    String(decoding: bytes, as: UTF8.self), url: stream.url, directory: directory,
                    imageStreams: lines, wrapping: wrapping)
            case .dash:
                let representations = widths.compactMap { width, folder in
                    width.layout.map {
                        DASHImageRepresentation(
                            layout: $0, mediaTemplate: folder + sheetTemplate,
                            sheetBytes: width.sheetBytes,
                            id: folder.isEmpty ? "thumbnails" : "thumbnails-\(width.tileSize.width)")
                    }
                }
                text = try StreamAttachment.mpd(
                    bytes, url: stream.url, directory: directory, representations: representations)
            }
        } catch {
            throw MediaError(
                .invalidMedia, "the tracks cannot be added to the stream", url: stream.url, underlying: error)
        }
        let target = directory.appendingPathComponent(attachedName(presentation.streamingProtocol))
        do {
            try Data(text.utf8).write(to: target, options: .atomic)
        } catch {
            throw MediaError(
                .outputFailed, "cannot write \(target.path): \(error.localizedDescription)", underlying: error)
        }
        return target
    }
}
