import FilmstripFormats
import FilmstripImaging
import FilmstripMedia
import Foundation

extension MediaInfo {
    /// An animation of the video: `fps` exact frames a second from `start` to `end`, decoded in one pass from the
    /// keyframe before `start`, each encoded as it comes (a GIF keeps 2 bytes a pixel until its palette is chosen;
    /// a WebP nothing). It takes one of the decoders for the whole of its work.
    func animation(of video: VideoLibrary.Video, _ parameters: AnimationParameters) async throws -> Data {
        let times = try parameters.times(duration: try await duration(of: video))
        let url = video.file
        return try await decoding.run {
            var options = self.options()
            options.toleranceBefore = 0
            // One long run of frames: frame threads make it sooner.
            options.decoderThreads = 2
            // Frames come out of the decoder's scaler at their size (a video smaller than that, at its own).
            let natural = try await FrameExtractor(url: url, options: options).naturalSize()
            let box = parameters.frameSize(of: (natural.width, natural.height))
            options.maximumSize = PixelSize(width: box.width, height: box.height)
            let frames = FrameExtractor(url: url, options: options).images(at: times)
            var encoder: AnimationEncoder?
            for try await frame in frames {
                var image = frame.image
                let size = parameters.frameSize(of: (image.width, image.height))
                if (image.width, image.height) != size {
                    image = try image.scaled(width: size.width, height: size.height)
                }
                if encoder == nil {
                    encoder = try AnimationEncoder(
                        parameters.format, size: size, count: times.count, fps: parameters.fps)
                }
                try encoder?.add(image)
            }
            guard let encoder else { throw ServerError(status: 422, "no frame decoded for the animation") }
            return Data(try encoder.finish())
        }
    }
}

/// A GIF or WebP written a frame at a time, frames evenly spaced.
private struct AnimationEncoder {
    private var gif: GIFEncoder?
    private let webp: WebPAnimationEncoder?
    private let delays: [Int]
    private let fps: Double
    private var added = 0

    init(_ format: AnimationParameters.Format, size: (width: Int, height: Int), count: Int, fps: Double) throws {
        self.fps = fps
        delays = GIFEncoder.delays(count: count, every: 1 / fps)
        switch format {
        case .gif:
            gif = try GIFEncoder(width: size.width, height: size.height, frameCount: count)
            webp = nil
        case .webp:
            webp = try WebPAnimationEncoder(width: size.width, height: size.height)
        }
    }

    /// Milliseconds from the start to frame `n`.
    private func milliseconds(_ n: Int) -> Int { Int((Double(n) * 1000 / fps).rounded()) }

    mutating func add(_ image: PixelBuffer) throws {
        if gif != nil {
            try gif?.add(image, delay: delays[min(added, delays.count - 1)])
        } else {
            try webp?.add(image, at: milliseconds(added))
        }
        added += 1
    }

    consuming func finish() throws -> [UInt8] {
        if let gif { return gif.finish() }
        return try webp?.finish(at: milliseconds(added)) ?? []
    }
}
