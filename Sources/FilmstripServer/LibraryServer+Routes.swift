import FilmstripImaging
import FilmstripMedia
import FilmstripSync
import FilmstripThumbnails
import Foundation
import Hummingbird
import NIOCore

extension LibraryServer {
    func makeRouter() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.add(
            middleware: OriginGuard(loopbackOnly: configuration.bindsLoopback)
        )
        router.get("/") { _, _ in await self.respond { try await self.libraryPage() } }
        router.head("/") { _, _ in Self.head(await self.respond { try await self.libraryPage() }) }
        router.get("/watch/**") { request, _ in await self.respond { try await self.watchPage(request) } }
        router.head("/watch/**") { request, _ in Self.head(await self.respond { try await self.watchPage(request) }) }
        router.get("/media/**") { request, context in
            await self.respond { try await self.mediaFile(request, context: context, head: false) }
        }
        router.head("/media/**") { request, context in
            await self.respond { try await self.mediaFile(request, context: context, head: true) }
        }
        router.get("/api/track") { request, _ in await self.respond { try await self.trackJSON(request) } }
        router.get("/api/progress") { request, _ in await self.respond { try await self.progressEvents(request) } }
        router.get("/api/thumbnail") { request, _ in await self.respond { try await self.thumbnail(request) } }
        router.get("/api/status") { _, _ in await self.respond { try self.status() } }
        router.get("/api/image") { request, _ in await self.respond { try await self.image(request) } }
        router.get("/videos.json") { _, _ in await self.videosJSON() }
        router.head("/videos.json") { _, _ in Self.head(await self.videosJSON()) }
        // Image URLs: `/{id}/thumbnail.{jpg,png,webp}` (every other path is a JSON 404).
        router.get("/**") { request, _ in await self.imageURL(request, head: false) }
        router.head("/**") { request, _ in await self.imageURL(request, head: true) }
        return router
    }

    /// The answer to HEAD: the GET answer's status and headers, with its length and no body.
    private static func head(_ response: Response) -> Response {
        var headers = response.headers
        if let length = response.body.contentLength { headers[.contentLength] = "\(length)" }
        return Response(status: response.status, headers: headers, body: ResponseBody())
    }

    /// Runs a handler, turning its errors into a short plain-text response with their status.
    private func respond(_ handler: () async throws -> Response) async -> Response {
        var response: Response
        do {
            response = try await handler()
        } catch {
            let failure: ServerError =
                switch error {
                case let error as ServerError: error
                case let error as VideoLibrary.ResolveError: ServerError(error)
                case let error as HTTPError: ServerError(status: Int(error.status.code), error.status.reasonPhrase)
                default: ServerError(status: 500, "\(error)", underlying: error)
                }
            if failure.status >= 500 { logger.error("request failed", metadata: ["error": "\(failure)"]) }
            response = Response(
                status: HTTPResponse.Status(code: failure.status),
                headers: [.contentType: "text/plain; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: failure.message + "\n")))
        }
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.init("Referrer-Policy")!] = "no-referrer"
        return response
    }

    // MARK: Pages

    private func libraryPage() async throws -> Response {
        let videos = library.videos()
        let durations = await withTaskGroup(of: Indexed<Double?>.self) { group in
            for (i, video) in videos.enumerated() {
                group.addTask { Indexed(i, try? await self.media.duration(of: video)) }
            }
            var found = [Double?](repeating: nil, count: videos.count)
            for await child in group { found[child.index] = child.value }
            return found
        }
        let items = zip(videos, durations).map { Pages.LibraryItem(path: $0.path, name: $0.name, duration: $1) }
        return page(Pages.library(items, folders: library.roots.map(\.directory.path)))
    }

    private func watchPage(_ request: Request) async throws -> Response {
        let video = try resolve(path: request.uri.path, prefix: "/watch/")
        let src = HTML.component(video.path)
        var config: [String: Any] = [
            "trackURL": "/api/track?src=\(src)", "progressURL": "/api/progress?src=\(src)", "src": video.path,
        ]
        if let duration = try? await media.duration(of: video), duration.isFinite { config["duration"] = duration }
        guard video.isDASH else {
            // Files, and HLS streams, which browsers that play HLS natively play from their playlist.
            return page(
                Pages.watch(
                    title: video.name, subtitle: video.path, videoURL: "/media/\(HTML.path(video.path))",
                    config: config))
        }
        // Browsers do not play DASH natively: a poster, and the previews still scrub.
        return page(
            Pages.watch(
                title: video.name, subtitle: video.path, videoURL: nil, config: config,
                poster: "/api/thumbnail?src=\(src)&t=0",
                hint: "DASH does not play in a browser by itself (a player such as Shaka Player or dash.js plays it): "
                    + "the poster is its first frame, and its previews scrub as in any other video."))
    }

    private func page(_ html: String) -> Response {
        Response(
            status: .ok,
            headers: [
                .contentType: "text/html; charset=utf-8", .contentSecurityPolicy: PageAssets.contentSecurityPolicy,
                .cacheControl: "no-store",
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }

    // MARK: Media

    private func mediaFile(_ request: Request, context: BasicRequestContext, head: Bool) async throws -> Response {
        // A video, or a part of a stream (what its playlists name: segments, init sections, playlists).
        let video = try resolve(path: request.uri.path, prefix: "/media/", parts: true)
        let size = Int(video.size)
        let etag =
            "\"\(String(size, radix: 16))-\(String(Int64(video.modified.timeIntervalSince1970 * 1000), radix: 16))\""
        let lastModified = Self.httpDate(video.modified)
        var headers: HTTPFields = [
            .contentType: Self.mediaType(video.file.pathExtension), .acceptRanges: "bytes",
            .lastModified: lastModified, .eTag: etag,
        ]
        // A range of a file that has changed since the client's copy would splice two versions: with If-Range
        // naming another version, the whole file is sent instead.
        var rangeHeader = request.headers[.range]
        if let condition = request.headers[.ifRange], condition != etag, condition != lastModified {
            rangeHeader = nil
        }
        let range = ByteRange.parse(rangeHeader, size: size)
        switch range {
        case .unsatisfiable:
            headers[.contentRange] = "bytes */\(size)"
            return Response(status: .rangeNotSatisfiable, headers: headers)
        case .whole:
            headers[.contentLength] = "\(size)"
            guard !head, size > 0 else { return Response(status: .ok, headers: headers, body: ResponseBody()) }
            let body = try await FileIO().loadFile(path: video.file.path, range: 0...(size - 1), context: context)
            return Response(status: .ok, headers: headers, body: body)
        case .part(let bytes):
            headers[.contentLength] = "\(bytes.count)"
            headers[.contentRange] = "bytes \(bytes.lowerBound)-\(bytes.upperBound)/\(size)"
            guard !head else { return Response(status: .partialContent, headers: headers, body: ResponseBody()) }
            let body = try await FileIO().loadFile(path: video.file.path, range: bytes, context: context)
            return Response(status: .partialContent, headers: headers, body: body)
        }
    }

    // MARK: API

    private func trackJSON(_ request: Request) async throws -> Response {
        let video = try source(request)
        let track = try await tracks.track(for: video)
        let duration = try? await media.duration(of: video)
        let src = HTML.component(video.path)
        var object = Pages.trackObject(track, duration: duration) { "/api/image?src=\(src)&i=\($0)" }
        object["src"] = video.path
        return json(object)
    }

    private func status() throws -> Response {
        let s = tracks.statistics
        let object: [String: Any] = [
            "videos": library.videos().count,
            "generations": [
                "started": s.started, "completed": s.completed, "failed": s.failed, "running": s.running,
                "queued": s.queued, "peakRunning": s.peakRunning,
                "limit": max(1, configuration.maximumParallelGenerations),
            ],
            // Images of image URLs decoded and encoded (identical requests at once, and cached answers, count once).
            "images": ["rendered": images.renderCount, "storyboards": storyboards.generationCount],
        ]
        return json(object)
    }

    private func json(_ object: [String: Any]) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-cache"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: HTML.json(object))))
    }

    private func progressEvents(_ request: Request) async throws -> Response {
        let video = try source(request)
        let events = await tracks.progress(for: video)
        let body = ResponseBody { writer in
            // The events, and a comment every 15 s while none comes (a video waiting its turn), so proxies keep
            // the stream open and a client that went away is noticed.
            let (lines, continuation) = AsyncStream.makeStream(of: String.self)
            let forward = Task {
                for await event in events { continuation.yield(Self.serverSentEvent(event)) }
                continuation.finish()
            }
            let heartbeat = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(15))
                    continuation.yield(": keep-alive\n\n")
                }
            }
            defer {
                forward.cancel()
                heartbeat.cancel()
            }
            try await writer.write(ByteBuffer(string: ": filmstrip progress\n\n"))
            for await line in lines { try await writer.write(ByteBuffer(string: line)) }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"], body: body)
    }

    static func serverSentEvent(_ event: ProgressEvent) -> String {
        let json = HTML.json
        switch event {
        case .progress(let done, let total):
            let fraction = total > 0 ? Double(done) / Double(total) : 1
            return "event: progress\ndata: \(json(["fraction": fraction, "done": done, "total": total]))\n\n"
        case .ready(let cues, let origin):
            return "event: ready\ndata: \(json(["cues": cues, "origin": origin]))\n\n"
        case .failed(let message):
            return "event: failed\ndata: \(json(["message": message]))\n\n"
        }
    }

    private func thumbnail(_ request: Request) async throws -> Response {
        let video = try source(request)
        guard let text = request.uri.queryParameters.get("t"), let t = Double(text), t.isFinite, t >= 0 else {
            throw ServerError(status: 400, "t must be a time in seconds, 0 or more")
        }
        // Past any real video's end (about 116 days): nothing to decode.
        guard t <= 10_000_000 else { throw ServerError(status: 404, "no thumbnail at \(t) s") }
        if let track = await tracks.readyTrack(for: video) {
            // The last cue also covers its end, as on the page.
            let at = t == track.end ? track.placements.last?.start ?? t : t
            guard let thumbnail = try await track.thumbnails.thumbnail(at: at) else {
                throw ServerError(status: 404, "no thumbnail at \(t) s")
            }
            return image(thumbnail.imageData, format: thumbnail.format, source: "track")
        }
        do {
            return image(try await media.frame(of: video, at: t), format: .jpeg, source: "frame")
        } catch let error as MediaError where error.kind == .timeOutOfRange {
            throw ServerError(status: 404, "no frame at \(t) s", underlying: error)
        } catch let error as MediaError {
            throw ServerError(status: 422, error.chainedMessage, underlying: error)
        }
    }

    private func image(_ request: Request) async throws -> Response {
        let video = try source(request)
        guard let text = request.uri.queryParameters.get("i"), let index = Int(text), index >= 0 else {
            throw ServerError(status: 400, "i must be an image index")
        }
        let track = try await tracks.track(for: video)
        guard index < track.imageCount else { throw ServerError(status: 404, "the track has no image \(index)") }
        let data = try await track.thumbnails.imageData(at: index)
        let format = (try? ImageCodec.info(data).format) ?? .jpeg
        return image(data, format: format, source: track.origin)
    }

    private func image(_ data: Data, format: ImageFormat, source: String) -> Response {
        Response(
            status: .ok,
            headers: [
                .contentType: format.mimeType, .cacheControl: "private, max-age=60",
                .init("X-Filmstrip-Source")!: source,
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    // MARK: Paths

    /// The video named by `src=` (percent-decoded by the query parser).
    private func source(_ request: Request) throws -> VideoLibrary.Video {
        guard let src = request.uri.queryParameters.get("src"), !src.isEmpty else {
            throw ServerError(status: 400, "src= names no video")
        }
        return try library.resolve(src)
    }

    /// The video named by a raw request path after `prefix`: each component percent-decoded on its own, so an
    /// encoded `/` or `..` stays inside its component, where ``VideoLibrary`` refuses it.
    func resolve(
        path: String, prefix: String, parts: Bool = false, images: Bool = false
    ) throws -> VideoLibrary.Video {
        guard path.hasPrefix(prefix) else { throw VideoLibrary.ResolveError.notFound("no video named") }
        var components: [String] = []
        for raw in path.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false) {
            guard let decoded = String(raw).removingPercentEncoding else {
                throw VideoLibrary.ResolveError.forbidden("malformed percent-encoding")
            }
            components.append(decoded)
        }
        if images { return try library.resolveForImages(components: components) }
        return try parts ? library.resolveMedia(components: components) : library.resolve(components: components)
    }

    static func mediaType(_ pathExtension: String) -> String {
        switch pathExtension.lowercased() {
        case "mp4", "m4v": "video/mp4"
        case "mov": "video/quicktime"
        case "webm": "video/webm"
        case "mkv": "video/x-matroska"
        case "ts", "m2ts", "mts": "video/mp2t"
        case "ogv": "video/ogg"
        case "mpg", "mpeg": "video/mpeg"
        case "avi": "video/x-msvideo"
        case "flv": "video/x-flv"
        case "3gp": "video/3gpp"
        case "m3u8": "application/vnd.apple.mpegurl"
        case "mpd": "application/dash+xml"
        case "m4s", "cmfv": "video/iso.segment"
        case "m4a", "cmfa": "audio/mp4"
        case "aac": "audio/aac"
        case "mp3": "audio/mpeg"
        case "vtt": "text/vtt"
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "webp": "image/webp"
        default: "application/octet-stream"
        }
    }

    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
