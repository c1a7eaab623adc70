import FilmstripFormats
import Foundation

/// Makes the plan of a download: the renditions ``DownloadChoice`` takes from each period, their segments (media
/// playlists and segment indexes loaded), each file's local path, and the local playlists that name them.
struct DownloadPlanner {
    let client: StreamingClient
    let configuration: DownloadConfiguration

    /// The segments of one local playlist, across periods.
    private struct Run {
        var directory: String
        var renditions: [Presentation.Rendition] = []
        var track: Presentation.Track?
        /// Segment lists, one per period.
        var periods: [[SegmentReference]] = []
    }

    func plan() async throws -> DownloadPlan {
        let presentation = try await client.presentation()
        guard !presentation.isLive else { throw Self.live(client.url) }
        var video = Run(directory: "video")
        var audio: [Run] = []
        var iFrames = Run(directory: "iframes")
        let previews = configuration.previews ? try await imageTrack() : nil
        for period in presentation.periods {
            let videoTracks = period.tracks.filter { $0.kind == .video }
            if let track = videoTracks.first(where: { $0.isDefault || $0.roles.contains("main") }) ?? videoTracks.first,
                let rendition = DownloadChoice.video(track.renditions, configuration: configuration)
            {
                try await add(rendition, of: track, to: &video, in: presentation)
            }
            let audioTracks = DownloadChoice.audio(
                period.tracks.filter { $0.kind == .audio }, languages: configuration.audioLanguages)
            for (slot, track) in audioTracks.enumerated() {
                guard let rendition = DownloadChoice.best(track.renditions) else { continue }
                if audio.count <= slot { audio.append(Run(directory: "audio-\(slot + 1)")) }
                try await add(rendition, of: track, to: &audio[slot], in: presentation)
            }
            if configuration.previews, previews == nil,
                let track = period.tracks.first(where: { $0.kind == .iFrame }),
                let rendition = iFrameRendition(track.renditions, beside: video.renditions.last)
            {
                try await add(rendition, of: track, to: &iFrames, in: presentation)
            }
        }
        guard !video.periods.isEmpty || !audio.isEmpty else {
            throw DownloadError(.unsupported, "the stream has no video or audio rendition to download (\(client.url))")
        }
        var plan = DownloadPlan()
        plan.keyIDs = presentation.protection.flatMap(\.keyIDs)
        plan.licenseURL = presentation.protection.first { $0.isClearKey && $0.licenseURL != nil }?
            .licenseURL(relativeTo: presentation.url)
        var writer = LocalPlaylistWriter()
        var media: [(run: Run, path: String)] = []
        for run in [video] + audio + [iFrames] where !run.periods.isEmpty {
            let path = run.directory + ".m3u8"
            let entries = files(of: run, into: &plan, writer: &writer)
            plan.playlists.append(
                (path, LocalPlaylistWriter.mediaPlaylist(entries, iFramesOnly: run.directory == "iframes")))
            media.append((run, path))
        }
        plan.duration = video.periods.isEmpty ? duration(audio[0]) : duration(video)
        if let previews {
            var paths: [String] = []
            for (index, image) in previews.images.enumerated() {
                let name = "previews/\(String(format: "%05d", index + 1)).\(Self.fileExtension(image, default: "jpg"))"
                paths.append(name)
                let range = previews.byteRange(ofImage: index)
                plan.files.append(
                    DownloadFile(
                        path: name, url: image, range: range, object: .media,
                        estimate: range.map { Int64($0.count) } ?? 32 << 10))
            }
            plan.previews = PreviewPlan(track: previews, imagePaths: paths)
        }
        plan.playlists.append(
            (
                DownloadPlan.master,
                LocalPlaylistWriter.master(
                    video: media.first { $0.run.directory == "video" }.map { ($0.run.renditions, $0.path) },
                    audio: media.filter { $0.run.directory.hasPrefix("audio") }.map {
                        ($0.run.track, $0.run.renditions, $0.path)
                    },
                    iFrames: media.first { $0.run.directory == "iframes" }.map { ($0.run.renditions, $0.path) })
            ))
        return plan
    }

    private func add(
        _ rendition: Presentation.Rendition, of track: Presentation.Track, to run: inout Run,
        in presentation: Presentation
    ) async throws {
        let list = try await client.segmentList(of: rendition, in: presentation)
        guard !list.isLive else { throw Self.live(client.url) }
        run.renditions.append(rendition)
        run.track = run.track ?? track
        run.periods.append(list.references)
    }

    static func live(_ url: URL) -> DownloadError {
        DownloadError(
            .unsupported,
            "\(url.absoluteString) is a live stream; downloads take video on demand (record a live stream with "
                + "`ffmpeg -i URL -c copy`, or download it once it has ended)")
    }

    /// The image track when the stream has one; `nil` when it has none.
    private func imageTrack() async throws -> ThumbnailTrack? {
        do {
            return try await client.imageTrack(manifest: try await client.manifestBytes()).track
        } catch let error as StreamingError where error.kind == .noTrack {
            return nil
        }
    }

    /// The I-frame rendition nearest the video's height (else the highest).
    private func iFrameRendition(
        _ renditions: [Presentation.Rendition], beside video: Presentation.Rendition?
    ) -> Presentation.Rendition? {
        guard let height = video?.height else { return DownloadChoice.best(renditions) }
        return renditions.min { abs(($0.height ?? 0) - height) < abs(($1.height ?? 0) - height) }
    }

    private func duration(_ run: Run) -> Double {
        run.periods.joined().reduce(0) { $0 + $1.duration }
    }

    /// The run's files added to the plan (initialisation sections and keys once each), and its playlist entries.
    private func files(
        of run: Run, into plan: inout DownloadPlan, writer: inout LocalPlaylistWriter
    ) -> [LocalPlaylistWriter.Entry] {
        var entries: [LocalPlaylistWriter.Entry] = []
        var initPaths: [InitializationSection: String] = [:]
        var number = 0
        for (period, references) in run.periods.enumerated() {
            let rendition = run.renditions[period]
            let bitrate = Double(rendition.averageBandwidth ?? rendition.bandwidth)
            for (index, segment) in references.enumerated() {
                number += 1
                var entry = LocalPlaylistWriter.Entry(
                    duration: segment.duration,
                    path: "\(run.directory)/\(String(format: "%05d", number)).\(Self.fileExtension(segment.url))",
                    discontinuity: !entries.isEmpty
                        && (index == 0 || segment.discontinuitySequence != references[index - 1].discontinuitySequence))
                if segment.isGap {
                    // Nothing to fetch: the local playlist keeps the gap (EXT-X-GAP).
                    entry.isGap = true
                    entries.append(entry)
                    continue
                }
                let estimate =
                    segment.byteRange.map { Int64($0.count) }
                    ?? Self.bytes(bitsPerSecond: bitrate > 0 ? bitrate : 128_000, seconds: segment.duration)
                plan.files.append(
                    DownloadFile(
                        path: entry.path, url: segment.url, range: segment.byteRange, object: .media,
                        estimate: estimate))
                if let section = segment.initialization {
                    if let known = initPaths[section] {
                        entry.initialization = known
                    } else {
                        let path = "\(run.directory)/init-\(initPaths.count + 1).\(Self.fileExtension(section.url))"
                        initPaths[section] = path
                        entry.initialization = path
                        plan.files.append(
                            DownloadFile(
                                path: path, url: section.url, range: section.byteRange, object: .initialization,
                                estimate: section.byteRange.map { Int64($0.count) } ?? 2048))
                    }
                }
                if let key = segment.key {
                    let (path, isNew) = writer.keyPath(for: key.uri)
                    if isNew {
                        plan.files.append(
                            DownloadFile(path: path, url: key.uri, object: .key, estimate: 16, isSecret: true))
                    }
                    // Without an IV the key's IV is the segment's sequence number (RFC 8216 5.2), which the local
                    // playlist, numbered from 0, would not keep: it is written out.
                    let iv =
                        key.iv ?? (0..<16).map { UInt8(truncatingIfNeeded: UInt64(segment.number) >> (8 * (15 - $0))) }
                    entry.key = .init(method: key.method, path: path, iv: iv)
                }
                entries.append(entry)
            }
        }
        return entries
    }

    /// Bytes for `seconds` at `bitsPerSecond`, at least 1 and at most 1 TB (both come from the manifest).
    static func bytes(bitsPerSecond: Double, seconds: Double) -> Int64 {
        let bytes = bitsPerSecond * seconds / 8
        guard bytes.isFinite else { return 1 << 40 }
        return Int64(min(max(1, bytes), Double(1 << 40)))
    }

    /// A short extension for a stored file, from its URL's path (letters and digits only), else `fallback`.
    static func fileExtension(_ url: URL, default fallback: String = "bin") -> String {
        let ext = url.pathExtension.lowercased()
        // `part` is the store's temporary suffix.
        guard (1...5).contains(ext.count), ext != "part", ext.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
        else {
            return fallback
        }
        return ext
    }
}
