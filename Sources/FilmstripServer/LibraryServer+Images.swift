import FilmstripFormats
import FilmstripImaging
import FilmstripMedia
import FilmstripSync
import Foundation
import Hummingbird
import NIOCore

/// What an image URL's last component asks for.
enum ImageRoute: Sendable {
    case thumbnail(ImageFormat)
    case storyboardImage(ImageFormat)
    case storyboardJSON
    case storyboardVTT
    case animated(AnimationParameters.Format)
}

/// Image URLs in Mux's scheme: `/{id}/thumbnail.{jpg,png,webp}` and `/{id}/storyboard.{vtt,json,jpg,png,webp}` for
/// every video of the library, and `/videos.json` listing the ids. Errors are JSON:
/// `{"error": {"type": …, "messages": […]}}`.
extension LibraryServer {
    /// The file names an image URL may end with.
    static let imageNames: [String: ImageRoute] = [
        "thumbnail.jpg": .thumbnail(.jpeg), "thumbnail.png": .thumbnail(.png), "thumbnail.webp": .thumbnail(.webp),
        "storyboard.jpg": .storyboardImage(.jpeg), "storyboard.png": .storyboardImage(.png),
        "storyboard.webp": .storyboardImage(.webp), "storyboard.json": .storyboardJSON,
        "storyboard.vtt": .storyboardVTT, "animated.gif": .animated(.gif), "animated.webp": .animated(.webp),
    ]

    /// `GET /videos.json` (see ``ImageAnswers/videos(_:media:)``).
    func videosJSON() async -> Response {
        await ImageAnswers.videos(library.videos() + library.remoteStreams, media: media)
    }

    /// `GET` or `HEAD /{id}/thumbnail.{jpg,png,webp}?…`.
    func imageURL(_ request: Request, head: Bool) async -> Response {
        do {
            return try await imageResponse(request, head: head)
        } catch is ImageStore.Busy {
            var response = ImageAnswers.jsonError(
                503, type: "busy", ["too many images are being made: try again shortly"])
            response.headers[.retryAfter] = "1"
            return response
        } catch let refusal as URLSigning.Refusal {
            return ImageAnswers.jsonError(403, type: "forbidden", [refusal.message])
        } catch let problem as ImageParameters.Problem {
            return ImageAnswers.jsonError(400, type: "invalid_parameters", problem.messages)
        } catch let error as VideoLibrary.ResolveError {
            let failure = ServerError(error)
            return ImageAnswers.jsonError(
                failure.status, type: failure.status == 404 ? "not_found" : "forbidden", [failure.message])
        } catch let error as ServerError {
            return ImageAnswers.jsonError(
                error.status, type: error.status >= 500 ? "server_error" : "unprocessable", [error.message])
        } catch let error as MediaError where error.kind == .timeOutOfRange {
            return ImageAnswers.jsonError(400, type: "invalid_parameters", ["time is past the video's end"])
        } catch let error as MediaError {
            logger.warning("image failed", metadata: ["error": "\(error.chainedMessage)"])
            return ImageAnswers.jsonError(422, type: "unprocessable", [error.chainedMessage])
        } catch {
            logger.error("image failed", metadata: ["error": "\(error)"])
            return ImageAnswers.jsonError(500, type: "server_error", ["the image could not be made"])
        }
    }

    private func imageResponse(_ request: Request, head: Bool) async throws -> Response {
        let path = request.uri.path
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex,
            let route = Self.imageNames[String(path[path.index(after: slash)...])]
        else {
            return ImageAnswers.jsonError(404, type: "not_found", ["no such route: \(String(path.prefix(200)))"])
        }
        if let query = request.uri.query, query.utf8.count > ImageParameters.longestQuery {
            return ImageAnswers.jsonError(
                414, type: "invalid_parameters", ["the query is longer than \(ImageParameters.longestQuery) bytes"])
        }
        let id = String(path[..<slash])
        let video = try resolve(path: id, prefix: "/", images: true)
        if video.isRemote, let host = video.file.host {
            // A stream on a private address is refused before anything is fetched (the fetches check every
            // redirect too).
            let policy = media.addressPolicy
            if let refusal = await Task.detached(operation: { policy.refusal(host: host) }).value {
                throw ServerError(status: 403, "the stream's address is not allowed: \(refusal)")
            }
        }
        let given = request.uri.queryParameters.map { (String($0.key), String($0.value)) }
        if case .animated(let format) = route {
            let signed = try signing.parameters(query: given, id: String(id.dropFirst()), audience: .animated)
            let parameters = try AnimationParameters(format: format, query: signed.query)
            if await media.isLive(video) { throw ServerError(status: 501, "animations of live streams are not made") }
            return try await ImageAnswers.made(
                key: MediaInfo.key(video) + "\n" + parameters.canonical, type: format.mimeType, immutable: true,
                expires: signed.expires, request: request, head: head
            ) { [images, media] in
                try await images.image(key: MediaInfo.key(video) + "\n" + parameters.canonical) {
                    try await media.animation(of: video, parameters)
                }
            }
        }
        guard case .thumbnail(let format) = route else {
            let signed = try signing.parameters(query: given, id: String(id.dropFirst()), audience: .storyboard)
            if await media.isLive(video) { throw ServerError(status: 501, "storyboards of live streams are not made") }
            var response = try await ImageAnswers.storyboard(
                route, of: video, from: storyboards, id: id, token: given.first { $0.0 == "token" }?.1,
                request: request, head: head)
            if let expires = signed.expires {
                response.headers[.cacheControl] = ImageAnswers.cacheControl(until: expires)
            }
            return response
        }
        let signed = try signing.parameters(query: given, id: String(id.dropFirst()), audience: .thumbnail)
        let parameters = try ImageParameters(format: format, query: signed.query)
        let live = await media.isLive(video)
        if parameters.latest || live {
            guard live else { throw ImageParameters.Problem(messages: ["latest=true is for live streams"]) }
            guard parameters.time == nil else {
                throw ImageParameters.Problem(messages: ["time is not for a live stream: ask latest=true"])
            }
            // The frame at the edge: one image per edge, kept by caches for a second or two.
            let edge = try await media.liveEdge(of: video)
            let still = {
                var still = parameters
                still.latest = true
                return still
            }()
            let key = ImageStore.key(video, still) + "\nedge=\(edge)"
            var response = try await ImageAnswers.made(
                key: key, type: format.mimeType, immutable: false, expires: signed.expires, request: request,
                head: head
            ) { [images, media] in
                try await images.image(key: key) {
                    try await media.latestPicture(of: video, edge: edge, fitting: still.decodeBox) {
                        try ImageStore.encode($0, still)
                    }
                }
            }
            if signed.expires == nil { response.headers[.cacheControl] = "public, max-age=2" }
            return response
        }
        if let time = parameters.time, let duration = try? await media.duration(of: video), duration.isFinite,
            time > duration
        {
            throw ImageParameters.Problem(messages: ["time \(time) is past the video's end (\(duration) s)"])
        }
        // Without a time, the representative poster's: the same image (and ETag) as that time asked for, so the
        // tag follows the choice of poster.
        var resolved = parameters
        if resolved.time == nil { resolved.time = try await media.posterTime(of: video) ?? 0 }
        return try await ImageAnswers.made(
            key: ImageStore.key(video, resolved), type: format.mimeType, immutable: parameters.time != nil,
            expires: signed.expires, request: request, head: head
        ) { [images, resolved] in try await images.image(of: video, resolved) }
    }

}
