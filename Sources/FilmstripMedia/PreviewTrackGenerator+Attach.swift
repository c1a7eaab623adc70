import FilmstripFormats
import FilmstripStreaming
import Foundation

extension PreviewTrackGenerator {
    /// The name of the stream's manifest with the tracks added, per protocol.
    static func attachedName(_ streamingProtocol: Presentation.StreamingProtocol) -> String {
        streamingProtocol == .hls ? "master.m3u8" : "manifest.mpd"
    }

    /// Refuses an attachment that would overwrite the input itself.
    static func checkAttachment(
        input: URL, directory: URL, streamingProtocol: Presentation.StreamingProtocol
    ) throws(MediaError) {
        let target = directory.appendingPathComponent(attachedName(streamingProtocol))
        if input.isFileURL, input.standardizedFileURL.resolvingSymlinksInPath() == target.resolvingSymlinksInPath() {
            throw MediaError(
                .invalidArgument,
                "the stream's manifest is \(target.path) itself; write the tracks to another directory (--output)",
                url: input)
        }
    }

    /// Writes the stream's own manifest with the image tracks of `summary` (every width) added, atomically, after
    /// every other file; returns where.
    static func attach(
        _ summary: PreviewTrackSummary, stream: StreamFrames, timeline: MediaTimeline,
        displaySize: (width: Int, height: Int), directory: URL, sheetPrefix: String
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
                let lines = widths.compactMap { width, folder in
                    width.layout.map {
                        StreamAttachment.ImageStream(
                            line: PreviewTrackWriter.imageStreamInf(
                                $0, uri: folder + "thumbnails.m3u8", sheetBytes: width.sheetBytes))
                    }
                }
                let rendition = timeline.renditions.first
                let seconds = max(0.001, presentation.duration ?? timeline.end)
                let wrapping = StreamAttachment.WrappedVariant(
                    bandwidth: rendition.map(\.bandwidth).flatMap { $0 > 0 ? $0 : nil }
                        ?? Int((Double(summary.bytesRead) * 8 / seconds).rounded(.up)),
                    resolution: displaySize, codecs: rendition?.codecs)
                text = try StreamAttachment.hlsMaster(
                    String(decoding: bytes, as: UTF8.self), url: stream.url, directory: directory,
                    imageStreams: lines, wrapping: wrapping)
            case .dash:
                let representations = widths.compactMap { width, folder in
                    width.layout.map {
                        DASHImageRepresentation(
                            layout: $0, mediaTemplate: folder + sheetPrefix + "$Number$.jpg",
                            sheetBytes: width.sheetBytes,
                            id: folder.isEmpty ? "thumbnails" : "thumbnails-\(width.tileSize.width)")
                    }
                }
                text = try StreamAttachment.mpd(
                    bytes, url: stream.url, directory: directory, representations: representations)
            }
        } catch {
            throw MediaError(.invalidMedia, "the tracks cannot be added to the stream: \(error)", url: stream.url)
        }
        let target = directory.appendingPathComponent(attachedName(presentation.streamingProtocol))
        do {
            try Data(text.utf8).write(to: target, options: .atomic)
        } catch {
            throw MediaError(.outputFailed, "cannot write \(target.path): \(error.localizedDescription)")
        }
        return target
    }
}
