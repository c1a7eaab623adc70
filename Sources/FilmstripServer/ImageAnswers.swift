import FilmstripFormats
import FilmstripImaging
import FilmstripSync
import Foundation
import Hummingbird
import NIOCore

/// The answers of image URLs that need no server state: storyboards from their store, caching headers, errors.
enum ImageAnswers {
    /// `GET /videos.json`: every video's id (its path, each component percent-encoded, as image URLs and
    /// `/watch/` take it), name, duration in seconds (`null` when it cannot be read) and kind (`vod` or `live`).
    static func videos(_ videos: [VideoLibrary.Video], media: MediaInfo) async -> Response {
        let facts = await withTaskGroup(of: Indexed<(live: Bool, duration: Double?)>.self) { group in
            for (i, video) in videos.enumerated() {
                group.addTask {
                    let live = await media.isLive(video)
                    return Indexed(i, (live, live ? nil : try? await media.duration(of: video)))
                }
            }
            var found = [(live: Bool, duration: Double?)](repeating: (false, nil), count: videos.count)
            for await child in group { found[child.index] = child.value }
            return found
        }
        let entries: [[String: Any]] = zip(videos, facts).map { video, fact in
            [
                "id": HTML.path(video.path), "name": video.name,
                "duration": fact.duration.flatMap { $0.isFinite ? $0 : nil } ?? NSNull(),
                "kind": fact.live ? "live" : "vod",
            ]
        }
        return Response(
            status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-cache"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: HTML.json(["videos": entries]))))
    }

    /// The answer with the image `key` stands for, from `image` (which makes it once), or 304 when the client has it: a strong `ETag`, kept a year
    /// when `immutable` (a time's frame or an animation of a video version never changes; the poster may be chosen
    /// better by a later release, so it is kept an hour), and never past a signed URL's expiry.
    static func made(
        key: String, type: String, immutable: Bool, expires: Double?, request: Request, head: Bool,
        _ image: @Sendable () async throws -> Data
    ) async throws -> Response {
        let etag = ImageStore.entityTag(key)
        var headers: HTTPFields = [
            .eTag: etag, .cacheControl: immutable ? "public, max-age=31536000, immutable" : "public, max-age=3600",
        ]
        if let expires { headers[.cacheControl] = ImageAnswers.cacheControl(until: expires) }
        if let condition = request.headers[.ifNoneMatch], ImageAnswers.matches(condition, etag) {
            return Response(status: .notModified, headers: headers)
        }
        let data = try await image()
        headers[.contentType] = type
        headers[.contentLength] = "\(data.count)"
        return Response(
            status: .ok, headers: headers,
            body: head ? ResponseBody() : ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// `storyboard.json` (Mux's schema, its `url` the storyboard image's path), `storyboard.vtt` (a WebVTT cue per
    /// tile, each naming its region of the image) or the image itself.
    static func storyboard(
        _ route: ImageRoute, of video: VideoLibrary.Video, from storyboards: StoryboardStore, id: String,
        token: String?,
        request: Request, head: Bool
    ) async throws -> Response {
        let board = try await storyboards.storyboard(of: video)
        let etag = ImageStore.entityTag(board.key + "\n\(route)")
        var headers: HTTPFields = [.eTag: etag, .cacheControl: "public, max-age=86400"]
        if let condition = request.headers[.ifNoneMatch], matches(condition, etag) {
            return Response(status: .notModified, headers: headers)
        }
        let image = id + "/storyboard.jpg" + (token.map { "?token=" + HTML.component($0) } ?? "")
        let data: Data
        switch route {
        case .storyboardJSON:
            let tiles: [[String: Any]] = board.cues.map {
                ["start": $0.start, "x": Int($0.region!.x), "y": Int($0.region!.y)]
            }
            let object: [String: Any] = [
                "url": image, "tile_width": board.tileSize.width, "tile_height": board.tileSize.height,
                "duration": board.duration, "tiles": tiles,
            ]
            data = Data(HTML.json(object).utf8)
            headers[.contentType] = "application/json"
        case .storyboardVTT:
            var text = "WEBVTT\n"
            for cue in board.cues {
                let from = WebVTTTimestamp.string(milliseconds: cue.startMilliseconds)
                text += "\n\(from) --> \(WebVTTTimestamp.string(milliseconds: cue.endMilliseconds))\n"
                text += "\(image)#\(cue.region!)\n"
            }
            data = Data(text.utf8)
            headers[.contentType] = "text/vtt; charset=utf-8"
        case .storyboardImage(let format):
            data = try storyboards.image(of: board, as: format)
            headers[.contentType] = format.mimeType
        case .thumbnail, .animated:
            throw ServerError(status: 500, "not a storyboard")
        }
        headers[.contentLength] = "\(data.count)"
        return Response(
            status: .ok, headers: headers,
            body: head ? ResponseBody() : ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// Caching for an answer to a signed URL: shared caches keep it until its token expires, no longer.
    static func cacheControl(until expires: Double) -> String {
        let left = max(0, min(31_536_000, (expires - Date().timeIntervalSince1970).rounded(.down)))
        return "public, max-age=\(Int(left))"
    }

    /// Whether an `If-None-Match` value names `etag` (a list, weak tags compared weakly, or `*`).
    static func matches(_ condition: String, _ etag: String) -> Bool {
        condition.split(separator: ",").contains { item in
            let tag = item.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }

    static func jsonError(_ status: Int, type: String, _ messages: [String]) -> Response {
        let body = HTML.json(["error": ["type": type, "messages": messages]])
        return Response(
            status: HTTPResponse.Status(code: status),
            headers: [.contentType: "application/json", .cacheControl: "no-store", .xContentTypeOptions: "nosniff"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }
}
