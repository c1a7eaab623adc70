import FilmstripFormats
import FilmstripImaging
import FilmstripSync
import Foundation

/// An HLS or DASH presentation through the streaming layer: only the manifests, the rendition's initialisation data
/// and the segments that hold the times asked for are fetched.
final class StreamFrameSource: FrameSource {
    let stream: StreamFrames
    let options: FrameExtractorConfiguration

    init(url: URL, options: FrameExtractorConfiguration) {
        stream = StreamFrames(url: url, options: options)
        self.options = options
    }

    var bytesRead: Int { stream.client.statistics.bytes }
    var requestCount: Int { stream.client.statistics.requests }
    var decodedFrameCount: Int { stream.framesDecoded }

    func duration() async throws -> Double { try await stream.duration() }

    /// A stream has no file index.
    func keyframeTimes() async throws -> [Double] { [] }

    func naturalSize(turning: Bool) async throws -> PixelSize {
        let timeline = try await stream.timeline()
        if let size = timeline.size { return size }
        let first = try await stream.open(0, of: timeline, cancellation: CancellationFlag())
        let (w, h) = first.input.geometry.outputSize(fittingIn: nil, turning: turning)
        return PixelSize(width: w, height: h)
    }

    func frames(at times: [Double], yield: @escaping @Sendable (VideoFrame) -> Void) async throws {
        let flag = CancellationFlag()
        do {
            try await withTaskCancellationHandler {
                try await stream.frames(at: times, options: options, cancellation: flag, yield: yield)
            } onCancel: {
                flag.cancelAll()
            }
        } catch {
            throw StreamFrames.mediaError(error, url: stream.url)
        }
    }
}
