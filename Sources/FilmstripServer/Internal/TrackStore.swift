import FilmstripLoading
import FilmstripMedia
import FilmstripPreviews
import FilmstripSync
import Foundation
import Logging

/// One preview track per video: a stream's own image track, else the track beside the video when there is one, else
/// one generated into the cache
/// directory (kept across runs). A video has at most one preparation under way; every request for it waits on
/// that one, and generations run at most `maximumParallelGenerations` at a time.
actor TrackStore {
    private enum Entry {
        case pending(Task<PreparedTrack, any Error>, ProgressChannel)
        case ready(PreparedTrack)
        case failed(ServerError)
    }

    /// The track files looked for beside a video, in order: same base name, these extensions.
    static let besideExtensions = ["vtt", "bif", "json", "m3u8", "mpd"]

    private let library: VideoLibrary
    private let cacheDirectory: URL
    private let options: PreviewTrackConfiguration
    private let generations: AsyncLimiter
    private let logger: Logger
    /// By video version (path, size, modification time): a changed file is a new entry.
    private var entries: [String: Entry] = [:]
    /// The tracks beside each video version when its entry was made (name, size, modification time), so a track
    /// added, changed or removed beside a video is noticed on the next request.
    private var besides: [String: String] = [:]
    /// When each entry was last asked for, to let the least recently used ready tracks go.
    private var lastUse: [String: UInt64] = [:]
    private var uses: UInt64 = 0
    /// Ready tracks kept loaded; one let go is loaded again from its folder on its next request.
    static let keptTracks = 32
    private let counters = GenerationCounters()

    init(library: VideoLibrary, configuration: ServerConfiguration, logger: Logger) {
        self.library = library
        self.cacheDirectory = configuration.cacheDirectory
        let parallel = max(1, configuration.maximumParallelGenerations)
        var options = configuration.trackOptions
        options.workers = max(1, options.workers / parallel)
        self.options = options
        self.generations = AsyncLimiter(limit: parallel)
        self.logger = logger
    }

    /// What generation has done since the server started.
    nonisolated var statistics: GenerationStatistics { counters.state.withLock { $0 } }

    /// The track, if it is ready now.
    func readyTrack(for video: VideoLibrary.Video) -> PreparedTrack? {
        let key = Self.versionKey(video, options: options)
        guard case .ready(let track)? = entries[key], besides[key] == Self.besideSignature(video) else { return nil }
        return track
    }

    /// What lies beside the video that could be its track.
    static func besideSignature(_ video: VideoLibrary.Video) -> String {
        let base = video.file.deletingPathExtension()
        return besideExtensions.compactMap { ext -> String? in
            let path = base.appendingPathExtension(ext).path
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return nil }
            let size = (attributes[.size] as? NSNumber)?.int64Value ?? 0
            let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            return "\(ext):\(size):\(modified)"
        }.joined(separator: ",")
    }

    /// The track, prepared (found or generated) first if needed.
    func track(for video: VideoLibrary.Video) async throws -> PreparedTrack {
        switch entry(for: video) {
        case .ready(let track): return track
        case .failed(let error): throw error
        case .pending(let task, _): return try await task.value
        }
    }

    /// The progress of the video's preparation (started if needed), ending with `ready` or `failed`.
    func progress(for video: VideoLibrary.Video) -> AsyncStream<ProgressEvent> {
        switch entry(for: video) {
        case .pending(_, let channel):
            return channel.listen()
        case .ready(let track):
            return AsyncStream {
                $0.yield(.ready(cues: track.placements.count, origin: track.origin)); $0.finish()
            }
        case .failed(let error):
            return AsyncStream {
                $0.yield(.failed(error.message)); $0.finish()
            }
        }
    }

    private func entry(for video: VideoLibrary.Video) -> Entry {
        let key = Self.versionKey(video, options: options)
        uses += 1
        lastUse[key] = uses
        let signature = Self.besideSignature(video)
        if let existing = entries[key] {
            if case .pending = existing { return existing }
            if besides[key] == signature { return existing }
            // A track beside the video appeared, changed or went: look again.
            entries[key] = nil
        }
        besides[key] = signature
        let channel = ProgressChannel()
        let task = Task.detached { [library, cacheDirectory, options, generations, logger, counters] in
            try await Self.prepare(
                video, library: library, cacheDirectory: cacheDirectory.appendingPathComponent(key),
                options: options, generations: generations, channel: channel, counters: counters, logger: logger)
        }
        entries[key] = .pending(task, channel)
        Task { await self.settle(key, task: task, channel: channel) }
        return .pending(task, channel)
    }

    private func settle(_ key: String, task: Task<PreparedTrack, any Error>, channel: ProgressChannel) async {
        do {
            let track = try await task.value
            entries[key] = .ready(track)
            channel.finish(.ready(cues: track.placements.count, origin: track.origin))
            trim()
        } catch {
            let failure =
                error as? ServerError ?? ServerError(status: 422, "\(error)", underlying: error)
            // A video that cannot be read stays failed until it changes; anything else (a full disk, an
            // unwritable cache) is tried again on the next request.
            if failure.status == 422 {
                entries[key] = .failed(failure)
            } else {
                entries[key] = nil
                lastUse[key] = nil
                besides[key] = nil
            }
            channel.finish(.failed(failure.message))
        }
    }

    /// Lets the least recently used ready tracks go, past ``keptTracks``.
    private func trim() {
        let ready = entries.compactMap { key, entry -> String? in
            if case .ready = entry { return key }
            return nil
        }
        guard ready.count > Self.keptTracks else { return }
        for key in ready.sorted(by: { lastUse[$0, default: 0] < lastUse[$1, default: 0] })
            .prefix(ready.count - Self.keptTracks)
        {
            entries[key] = nil
            lastUse[key] = nil
            besides[key] = nil
        }
    }

    private static func prepare(
        _ video: VideoLibrary.Video, library: VideoLibrary, cacheDirectory folder: URL,
        options: PreviewTrackConfiguration,
        generations: AsyncLimiter, channel: ProgressChannel, counters: GenerationCounters, logger: Logger
    ) async throws -> PreparedTrack {
        // A stream's own image track (an HLS image playlist its master names, DASH thumbnail tiles in its MPD).
        if video.isStream,
            let own = try? await PreparedTrack(
                track: video.file, origin: "stream", allowed: library.contains, verifyImages: true)
        {
            return own
        }
        // A track beside the video, in any format the `.tracks` engine reads, whose images stay in the library.
        let base = video.file.deletingPathExtension()
        for ext in besideExtensions {
            let candidate = base.appendingPathExtension(ext)
            guard candidate != video.file, FileManager.default.fileExists(atPath: candidate.path),
                library.contains(candidate)
            else { continue }
            do {
                return try await PreparedTrack(
                    track: candidate, origin: "beside", allowed: library.contains, verifyImages: true)
            } catch {
                logger.warning(
                    "track beside the video not used",
                    metadata: ["track": "\(candidate.path)", "error": "\(error)"])
            }
        }
        let track = folder.appendingPathComponent(options.trackName)
        let inside: (URL) -> Bool = { url in
            url.isFileURL && VideoLibrary.isInside(url.standardizedFileURL.path, folder.standardizedFileURL.path)
        }
        if FileManager.default.fileExists(atPath: track.path),
            let cached = try? await PreparedTrack(track: track, origin: "cached", allowed: inside)
        {
            return cached
        }
        counters.state.withLock { $0.queued += 1 }
        try await generations.run {
            counters.state.withLock {
                $0.queued -= 1
                $0.started += 1
                $0.running += 1
                $0.peakRunning = max($0.peakRunning, $0.running)
            }
            defer { counters.state.withLock { $0.running -= 1 } }
            do {
                try await generate(video, into: folder, options: options, channel: channel)
                counters.state.withLock { $0.completed += 1 }
            } catch {
                counters.state.withLock { $0.failed += 1 }
                throw error
            }
        }
        return try await PreparedTrack(track: track, origin: "generated", allowed: inside)
    }

    /// Generates into a staging folder beside `folder`, then renames it into place, so the cache holds a
    /// complete track or none. Progress goes to `channel` when there is one.
    static func generate(
        _ video: VideoLibrary.Video, into folder: URL, options: PreviewTrackConfiguration, channel: ProgressChannel?
    ) async throws {
        let files = FileManager.default
        let parent = folder.deletingLastPathComponent()
        let staging = parent.appendingPathComponent(".staging-\(folder.lastPathComponent)-\(UUID().uuidString)")
        defer { try? files.removeItem(at: staging) }
        do {
            try files.createDirectory(at: parent, withIntermediateDirectories: true)
        } catch {
            throw ServerError(status: 500, "cannot create the cache directory \(parent.path)", underlying: error)
        }
        let step = Mutex(-1)
        do {
            _ = try await PreviewTrackGenerator.generate(from: video.file, to: staging, options: options) {
                done, total in
                // At most about a hundred events per track.
                // Workers finish out of order: only a higher figure goes out, published under the same lock that
                // compares it, so listeners never see progress go back.
                let percent = total > 0 ? done * 100 / total : 100
                step.withLock { last in
                    guard percent > last else { return }
                    last = percent
                    channel?.publish(.progress(done: done, total: total))
                }
            }
        } catch {
            throw ServerError(status: 422, "cannot make previews of \(video.name): \(error)", underlying: error)
        }
        try? files.removeItem(at: folder)
        do {
            try files.moveItem(at: staging, to: folder)
        } catch {
            throw ServerError(status: 500, "cannot keep the track in \(folder.path)", underlying: error)
        }
    }

    /// Names a video version and the generation options: the cache folder of its generated track (the content key
    /// a catalog gives the same video version under the same settings).
    static func versionKey(_ video: VideoLibrary.Video, options: PreviewTrackConfiguration) -> String {
        PreviewOutputSettings(options).contentKey(of: video.version)
    }
}

/// The counters behind ``GenerationStatistics``, shared by the store and its preparation tasks.
final class GenerationCounters: Sendable {
    let state = Mutex(GenerationStatistics())
}

/// Counts of track generations since the server started (`/api/status`).
struct GenerationStatistics: Sendable {
    var started = 0
    var completed = 0
    var failed = 0
    var running = 0
    var queued = 0
    var peakRunning = 0
}
