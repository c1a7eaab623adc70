import CSDL
import Filmstrip
import Foundation

/// Drawing on the window's renderer: filled rectangles, the bitmap font's text, and textures made from pixel
/// buffers. Used on the window's thread only.
struct Canvas {
    typealias Color = (UInt8, UInt8, UInt8, UInt8)

    let api: FSSDLFunctions
    let renderer: OpaquePointer?

    func fill(_ x: Int, _ y: Int, _ width: Int, _ height: Int, _ color: Color) {
        _ = api.SDL_SetRenderDrawColor(renderer, color.0, color.1, color.2, color.3)
        var rect = SDL_Rect(x: Int32(x), y: Int32(y), w: Int32(max(0, width)), h: Int32(max(0, height)))
        _ = api.SDL_RenderFillRect(renderer, &rect)
    }

    /// Draws `text` with its top left at (`x`, `y`).
    func text(_ text: String, x: Int, y: Int, scale: Int, color: Color) {
        var rects = BitmapFont.pixels(text, scale: scale).map {
            SDL_Rect(x: Int32(x + $0.x), y: Int32(y + $0.y), w: Int32(scale), h: Int32(scale))
        }
        guard !rects.isEmpty else { return }
        _ = api.SDL_SetRenderDrawColor(renderer, color.0, color.1, color.2, color.3)
        _ = api.SDL_RenderFillRects(renderer, &rects, Int32(rects.count))
    }

    /// A texture holding `image`, made once (`nil` when SDL cannot make it).
    func staticTexture(_ image: PixelBuffer) -> OpaquePointer? {
        guard
            let texture = api.SDL_CreateTexture(
                renderer, Self.pixelFormat(image), Int32(SDL_TEXTUREACCESS_STATIC.rawValue), Int32(image.width),
                Int32(image.height))
        else { return nil }
        image.bytes.withUnsafeBytes { raw in
            _ = api.SDL_UpdateTexture(texture, nil, raw.baseAddress, Int32(image.bytesPerRow))
        }
        return texture
    }

    /// The SDL format of a pixel buffer's bytes.
    static func pixelFormat(_ image: PixelBuffer) -> UInt32 {
        image.layout == .rgb ? SDL_PIXELFORMAT_RGB24.rawValue : SDL_PIXELFORMAT_ABGR8888.rawValue
    }
}
