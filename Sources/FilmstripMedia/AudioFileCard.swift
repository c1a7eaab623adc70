import CFFmpeg
public import FilmstripFormats
public import FilmstripImaging
public import Foundation

/// The picture that stands for a file of audio alone where a video would show a frame (a gallery's card, a
/// library's poster): the file's cover picture (an MP3's or M4A's attached art, decoded by libjpeg-turbo or libpng,
/// not FFmpeg), else a plain placeholder card.
public enum AudioFileCard {
    /// The card for `url`, fitted into `maximumSize`. Throws `noVideoStream` when the file has no audio either.
    public static func image(
        for url: URL, options: FrameExtractorConfiguration = FrameExtractorConfiguration(),
        maximumSize: PixelSize = PixelSize(width: 320, height: 320)
    ) throws -> PixelBuffer {
        let input = try MediaInput(
            .url(url, network: options.network), cancellation: CancellationFlag(), audio: .standard, audioOnly: true)
        guard input.isAudioOnly else {
            throw MediaError(.invalidArgument, "the input has video: take a frame of it", url: url)
        }
        return image(of: input, maximumSize: maximumSize)
    }

    /// The card of an opened audio-only input: its cover picture, else the placeholder.
    static func image(of input: MediaInput, maximumSize: PixelSize) -> PixelBuffer {
        if let bytes = input.format.flatMap(ContainerFacts.coverPicture), let (cover, _) = try? ImageCodec.decode(bytes)
        {
            let fitted = cover.size.fitted(within: maximumSize)
            if let scaled = try? cover.scaled(width: max(1, fitted.width), height: max(1, fitted.height)) {
                return scaled
            }
        }
        return placeholder(fitting: maximumSize)
    }

    /// A 16:9 card: a dark ground with a row of level bars, the mark of sound.
    public static func placeholder(fitting maximumSize: PixelSize) -> PixelBuffer {
        // As large a 16:9 rectangle as fits (a card is drawn at the size asked, never a thumbnail's 16x9 pixels).
        var (width, height) = (max(16, maximumSize.width), max(16, maximumSize.width) * 9 / 16)
        if height > maximumSize.height { (width, height) = (max(16, maximumSize.height * 16 / 9), maximumSize.height) }
        height = max(9, height)
        var bytes = [UInt8](repeating: 0, count: width * height * 3)
        for i in stride(from: 0, to: bytes.count, by: 3) { (bytes[i], bytes[i + 1], bytes[i + 2]) = (34, 38, 46) }
        let levels = [0.35, 0.6, 0.85, 0.5, 1.0, 0.7, 0.4, 0.8, 0.55, 0.3]
        let bar = max(1, width / 40)
        let gap = bar
        let total = levels.count * bar + (levels.count - 1) * gap
        let left = (width - total) / 2
        for (k, level) in levels.enumerated() {
            let barHeight = max(1, Int(Double(height) * 0.45 * level))
            let top = (height - barHeight) / 2
            for y in top..<(top + barHeight) {
                for x in (left + k * (bar + gap))..<(left + k * (bar + gap) + bar) where x >= 0 && x < width {
                    let at = (y * width + x) * 3
                    (bytes[at], bytes[at + 1], bytes[at + 2]) = (150, 170, 200)
                }
            }
        }
        return PixelBuffer(width: width, height: height, layout: .rgb, bytes: bytes)
    }
}
