import ArgumentParser
import Filmstrip
import Foundation

/// `inspect` on a media file (a video, or a file of audio alone): its container, duration and streams.
extension InspectCommand {
    /// Whether `url` is a media file rather than a track or manifest: a local file whose first bytes are none of
    /// the track formats (remote inputs are tried as tracks first; see `run`).
    static func isLocalMedia(_ url: URL) -> Bool {
        guard url.isFileURL, LocalFile.regularFileSize(url) != nil, let handle = FileHandle(forReadingAtPath: url.path)
        else { return false }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 4096)) ?? Data()
        return !head.isEmpty && ContentKind.detect(head) == nil
    }

    /// Prints the summary of the media file at `url`; a file nothing decodes exits 2 with a message naming its
    /// codec.
    func inspectMedia(_ url: URL) throws {
        var options = FrameExtractorConfiguration()
        options.loading = network.applied(to: options.loading)
        let summary: MediaSummary
        do {
            summary = try MediaSummary.probe(url: url, options: options)
        } catch {
            throw fail(error)
        }
        print(json ? Self.json(summary).text : Self.text(summary))
    }

    static func json(_ summary: MediaSummary) -> JSON {
        let video: JSON =
            summary.video.map { video in
                .object([
                    ("codec", .string(video.codec)), ("width", .int(video.width)), ("height", .int(video.height)),
                    ("display_width", .int(video.displayWidth)), ("display_height", .int(video.displayHeight)),
                    ("frame_rate", .double((video.frameRate * 1000).rounded() / 1000)),
                    ("quarter_turns", .int(video.quarterTurns)), ("mirrored", .bool(video.mirrored)),
                ])
            } ?? .null
        let audio = summary.audio.map { audio -> JSON in
            .object([
                ("codec", .string(audio.codec)), ("channels", .int(audio.channels)),
                ("sample_rate", .int(audio.sampleRate)), ("language", audio.language.map { .string($0) } ?? .null),
                ("decodable", .bool(audio.isDecodable)),
            ])
        }
        return .object([
            ("kind", .string(summary.isAudioOnly ? "audio-only" : "video")), ("container", .string(summary.container)),
            ("duration", .double((summary.duration * 1000).rounded() / 1000)), ("video", video),
            ("audio", .array(audio)), ("cover_picture", .bool(summary.hasCoverPicture)),
        ])
    }

    static func text(_ summary: MediaSummary) -> String {
        var lines = [
            (summary.isAudioOnly ? "audio only" : "video") + ", \(summary.container), "
                + String(format: "%.3f s", summary.duration)
        ]
        if let video = summary.video {
            var line = "video: \(video.codec) \(video.width)x\(video.height)"
            if (video.displayWidth, video.displayHeight) != (video.width, video.height) {
                line += ", shown \(video.displayWidth)x\(video.displayHeight)"
            }
            if video.frameRate > 0 { line += String(format: ", %.3f fps", video.frameRate) }
            if video.quarterTurns != 0 { line += ", turned \(video.quarterTurns * 90)°" }
            if video.mirrored { line += ", mirrored" }
            lines.append(line)
        }
        for (index, audio) in summary.audio.enumerated() {
            lines.append(
                "audio \(index + 1): \(audio.codec), \(audio.channels) channel\(audio.channels == 1 ? "" : "s"), "
                    + "\(audio.sampleRate) Hz" + (audio.language.map { ", \($0)" } ?? "")
                    + (audio.isDecodable ? "" : " (no decoder)"))
        }
        if summary.hasCoverPicture { lines.append("cover picture") }
        return lines.joined(separator: "\n")
    }
}
