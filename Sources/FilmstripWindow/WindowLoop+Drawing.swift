import CSDL
import Filmstrip
import Foundation

/// Drawing: the picture aspect-fitted, then the seek bar with its preview, then the statistics.
extension WindowLoop {
    /// Draws when a new picture came, something on screen changed, or (bar or statistics shown) every 250 ms.
    func drawIfNeeded() {
        let (serial, previewSerial) = shared.withLock { ($0.serial, $0.previewSerial) }
        let live = (overlay || barVisible) && now - lastDraw >= 0.25
        guard serial != drawnSerial || dirty || live || previewSerial != preview?.serial else { return }
        draw()
    }

    private func draw() {
        let (picture, serial, time, handed) = shared.withLock {
            ($0.picture, $0.serial, $0.pictureTime, $0.pictureHanded)
        }
        let uploaded = serial != drawnSerial && picture != nil
        if uploaded, let picture { upload(picture) }
        drawnSerial = serial
        dirty = false
        lastDraw = now
        _ = api.SDL_SetRenderDrawColor(renderer, 0, 0, 0, 255)
        _ = api.SDL_RenderClear(renderer)
        if let video {
            var target = fitted()
            _ = api.SDL_RenderCopy(renderer, video.texture, nil, &target)
        }
        _ = api.SDL_SetRenderDrawBlendMode(renderer, SDL_BLENDMODE_BLEND)
        if barVisible { drawBar() }
        if overlay { drawStatistics() }
        api.SDL_RenderPresent(renderer)
        if uploaded {
            let taken = min(max(monotonicSeconds() - handed, 0), 0.1)
            shared.withLock { state in
                state.drawn += 1
                state.presentationDelay =
                    state.drawn == 1 ? taken : state.presentationDelay * 0.9 + taken * 0.1
            }
            trace?.record(.presented(time: time))
        }
    }

    /// The picture's rectangle: its display aspect ratio fitted into the drawable, centred.
    func fitted() -> SDL_Rect {
        let size = drawable
        let aspect = Double(pictureSize.width) / Double(max(1, pictureSize.height))
        var width = size.width
        var height = Int((Double(width) / aspect).rounded())
        if height > size.height {
            height = size.height
            width = Int((Double(height) * aspect).rounded())
        }
        return SDL_Rect(
            x: Int32((size.width - width) / 2), y: Int32((size.height - height) / 2), w: Int32(width),
            h: Int32(height))
    }

    private func upload(_ picture: WindowState.Picture) {
        switch picture {
        case .planar(let frame):
            pictureSize = frame.displaySize
            let current = video
            if current == nil || current?.width != frame.width || current?.height != frame.height
                || current?.planar != frame.matrix || current?.full != frame.fullRange
            {
                let mode =
                    frame.fullRange
                    ? SDL_YUV_CONVERSION_JPEG
                    : frame.matrix == .bt709 ? SDL_YUV_CONVERSION_BT709 : SDL_YUV_CONVERSION_BT601
                // The conversion is chosen when the texture is made.
                api.SDL_SetYUVConversionMode(mode)
                replaceVideo(
                    format: SDL_PIXELFORMAT_IYUV.rawValue, width: frame.width, height: frame.height,
                    planar: frame.matrix, full: frame.fullRange)
            }
            guard let texture = video?.texture else { return }
            frame.planes[0].withUnsafeBufferPointer { y in
                frame.planes[1].withUnsafeBufferPointer { u in
                    frame.planes[2].withUnsafeBufferPointer { v in
                        _ = api.SDL_UpdateYUVTexture(
                            texture, nil, y.baseAddress, Int32(frame.strides[0]), u.baseAddress,
                            Int32(frame.strides[1]), v.baseAddress, Int32(frame.strides[2]))
                    }
                }
            }
        case .rgb(let image):
            pictureSize = image.size
            let rgb = image
            // RGBA is the 32-bit format whose bytes are R, G, B, A in memory on little-endian machines.
            let rgba = image.layout == .rgba
            if video == nil || video?.width != rgb.width || video?.height != rgb.height || video?.planar != nil
                || video?.full != !rgba
            {
                replaceVideo(
                    format: Canvas.pixelFormat(image), width: rgb.width, height: rgb.height, planar: nil, full: !rgba)
            }
            guard let texture = video?.texture else { return }
            rgb.bytes.withUnsafeBytes { raw in
                _ = api.SDL_UpdateTexture(texture, nil, raw.baseAddress, Int32(rgb.bytesPerRow))
            }
        }
    }

    private func replaceVideo(format: UInt32, width: Int, height: Int, planar: PlanarYUVFrame.Matrix?, full: Bool) {
        if let video { api.SDL_DestroyTexture(video.texture) }
        video = nil
        guard
            let texture = api.SDL_CreateTexture(
                renderer, format, Int32(SDL_TEXTUREACCESS_STREAMING.rawValue), Int32(width), Int32(height))
        else { return }
        video = (texture, width, height, planar, full)
    }

    // MARK: Bar and preview

    /// Drawing on this window's renderer.
    var canvas: Canvas { Canvas(api: api, renderer: renderer) }

    private func drawBar() {
        guard let seekBar, let player else { return }
        let size = drawable
        let bar = seekBar.track
        let scale = seekBar.scale
        canvas.fill(0, size.height - SeekBar.zone, size.width, SeekBar.zone, (0, 0, 0, 150))
        canvas.fill(bar.x, bar.y, bar.width, bar.height, (110, 110, 110, 255))
        let played = seekBar.fraction(of: player.currentTime)
        canvas.fill(bar.x, bar.y, Int(Double(bar.width) * played), bar.height, (235, 235, 235, 255))
        let clock = "\(SeekBar.clockText(player.currentTime)) / \(SeekBar.clockText(seekBar.timeline.upperBound))"
        canvas.text(clock, x: bar.x, y: bar.y - 10 - 7 * scale, scale: scale, color: (235, 235, 235, 255))
        guard let pointer, let hovered = barTime() else { return }
        // The pointer's place on the bar.
        canvas.fill(pointer.x - 1, bar.y - 4, 3, bar.height + 8, (255, 255, 255, 255))
        drawPreview(for: hovered, on: seekBar, at: pointer.x, above: bar.y - 12 - 7 * scale - 8)
    }

    private func drawPreview(for time: Double, on seekBar: SeekBar, at x: Int, above bottom: Int) {
        let shown = shared.withLock { state in state.preview.map { ($0, state.previewSerial) } }
        guard let ((asked, image, cue), serial) = shown else { return }
        if preview?.serial != serial {
            if let preview { api.SDL_DestroyTexture(preview.texture) }
            preview = nil
            if let texture = canvas.staticTexture(image) { preview = (texture, serial, image.width, image.height) }
        }
        guard let preview else { return }
        let scale = seekBar.scale
        let (left, top, width, height) = seekBar.preview(
            width: preview.width, height: preview.height, at: x, above: bottom)
        canvas.fill(left - 2, top - 2, width + 4, height + 4, (255, 255, 255, 255))
        var target = SDL_Rect(x: Int32(left), y: Int32(top), w: Int32(width), h: Int32(height))
        _ = api.SDL_RenderCopy(renderer, preview.texture, nil, &target)
        let label = SeekBar.clockText(time)
        let labelWidth = BitmapFont.measure(label, scale: scale)
        canvas.fill(
            left + (width - labelWidth) / 2 - 3, top + height - 7 * scale - 6, labelWidth + 6, 7 * scale + 6,
            (0, 0, 0, 190))
        canvas.text(
            label, x: left + (width - labelWidth) / 2, y: top + height - 7 * scale - 3, scale: scale,
            color: (255, 255, 255, 255))
        if reportedPreview != serial {
            reportedPreview = serial
            report(.preview(time: asked, cue: cue.lowerBound))
        }
    }

    // MARK: Statistics

    private func drawStatistics() {
        guard let player else { return }
        let counts = shared.withLock { ($0.received, $0.drawn) }
        let lines = SeekBar.statisticsLines(player, received: counts.0, drawn: counts.1)
        let scale = drawable.height >= 600 ? 2 : 1
        let lineHeight = 10 * scale
        let width = (lines.map { BitmapFont.measure($0, scale: scale) }.max() ?? 0) + 16
        canvas.fill(8, 8, width, lines.count * lineHeight + 12, (0, 0, 0, 170))
        for (index, line) in lines.enumerated() {
            canvas.text(line, x: 16, y: 14 + index * lineHeight, scale: scale, color: (255, 255, 255, 255))
        }
    }
}
