import FilmstripLoading
import Foundation

/// The transport of tracks found beside videos: it fetches nothing. Their files are read from disk by the loader
/// itself, and anything a track names on a network (a playlist's variant, an MPD's index range) is refused, so a
/// file dropped into a served folder cannot make the server send requests elsewhere.
struct LocalFilesOnly: DataLoading {
    func load(_ url: URL, configuration: LoadingConfiguration) async throws -> LoadResponse {
        throw LoadingError(.unsupportedURL, url: url, "a track in the library may only refer to files beside it")
    }
}
