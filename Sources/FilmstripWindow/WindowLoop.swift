import CSDL
import Filmstrip
import FilmstripSync
import Foundation

/// The window's own thread: SDL's window, renderer and events live on it (SDL wants them on one thread). It sleeps in
/// SDL's event wait and is woken by a user event when a frame arrives.
final class WindowLoop: @unchecked Sendable {
    // Set up on the thread, then touched only by it (but `wakeEvent`, read-only).
    let api: FSSDLFunctions
    let shared: WindowShared
    var window: OpaquePointer?
    var renderer: OpaquePointer?
    var wakeEvent: UInt32 = 0
    var audioDevice: SDL_AudioDeviceID = 0
    /// The PCM the audio device pulls from (kept until the device is closed: it is the callback's `userdata`).
    var ring: AudioRing?
    /// The timing trace `FILMSTRIP_WINDOW_TRACE` asks for.
    let trace = WindowTrace.fromEnvironment()
    /// The picture's texture, its size and how it was made.
    var video: (texture: OpaquePointer, width: Int, height: Int, planar: PlanarYUVFrame.Matrix?, full: Bool)?
    /// The size to show the picture at (sample aspect ratio applied).
    var pictureSize = PixelSize(width: 16, height: 9)
    var drawnSerial = -1
    var preview: (texture: OpaquePointer, serial: Int, width: Int, height: Int)?
    var reportedPreview = -1
    var pointer: (x: Int, y: Int)?
    var lastMotion = 0.0
    var dragging = false
    var lastDragSeek = 0.0
    /// The bar time last sought to (a click's release does not seek there again).
    var lastSought: Double?
    var overlay = false
    var fullscreen = false
    var lastDraw = 0.0
    var dirty = true
    let started = ContinuousClock.now

    private init(api: FSSDLFunctions, shared: WindowShared) {
        self.api = api
        self.shared = shared
    }

    /// Seconds since the window opened (monotonic).
    var now: Double {
        let elapsed = ContinuousClock.now - started
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    struct Opened: @unchecked Sendable {
        var loop: WindowLoop
        var audio: WindowAudio?
        var audioWarning: String?
    }

    /// Starts the window's thread, which opens SDL, the window and (with `audio`) the audio device, then runs the
    /// event loop; returns once the window is up, or throws what stopped it.
    static func open(
        api: FSSDLFunctions, title: String, size: PixelSize, audio: Bool, shared: WindowShared
    ) throws(WindowError) -> Opened {
        let loop = WindowLoop(api: api, shared: shared)
        let ready = DispatchSemaphore(value: 0)
        let result = Mutex<Result<Opened, WindowError>?>(nil)
        let thread = Thread {
            do throws(WindowError) {
                let opened = try loop.setUp(title: title, size: size, audio: audio)
                result.withLock { $0 = .success(opened) }
                ready.signal()
                loop.run()
            } catch {
                result.withLock { $0 = .failure(error) }
                ready.signal()
            }
        }
        thread.name = "filmstrip.window"
        thread.start()
        ready.wait()
        switch result.withLock({ $0 })! {
        case .success(let opened): return opened
        case .failure(let error): throw error
        }
    }

    private func setUp(title: String, size: PixelSize, audio: Bool) throws(WindowError) -> Opened {
        _ = api.SDL_SetHint(SDL_HINT_NO_SIGNAL_HANDLERS, "1")
        // Linear filtering when the picture is scaled to the window.
        _ = api.SDL_SetHint(SDL_HINT_RENDER_SCALE_QUALITY, "1")
        guard api.SDL_Init(SDL_INIT_VIDEO | SDL_INIT_EVENTS) == 0 else {
            throw WindowError("the display cannot be opened: \(api.lastError)")
        }
        let centered: Int32 = 0x2FFF_0000
        window = api.SDL_CreateWindow(
            title, centered, centered, Int32(size.width), Int32(size.height),
            SDL_WINDOW_RESIZABLE.rawValue | SDL_WINDOW_SHOWN.rawValue | SDL_WINDOW_ALLOW_HIGHDPI.rawValue)
        guard let window else {
            let reason = api.lastError
            api.SDL_Quit()
            throw WindowError("the window cannot be made: \(reason)")
        }
        renderer = api.SDL_CreateRenderer(window, -1, SDL_RENDERER_ACCELERATED.rawValue)
        if renderer == nil { renderer = api.SDL_CreateRenderer(window, -1, SDL_RENDERER_SOFTWARE.rawValue) }
        guard renderer != nil else {
            let reason = api.lastError
            api.SDL_DestroyWindow(window)
            api.SDL_Quit()
            throw WindowError("no renderer for the window: \(reason)")
        }
        wakeEvent = api.SDL_RegisterEvents(1)
        updateDrawable()
        var opened = Opened(loop: self)
        if audio {
            switch WindowAudio.open(api, trace: trace) {
            case .success(let (output, device, ring)):
                (audioDevice, self.ring) = (device, ring)
                opened.audio = output
            case .failure(let error): opened.audioWarning = error.message
            }
        } else {
            opened.audioWarning = "sound is off"
        }
        return opened
    }

    /// Wakes the loop (from any thread).
    func wake() {
        var event = SDL_Event()
        event.type = wakeEvent
        _ = api.SDL_PushEvent(&event)
    }

    func requestClose() {
        let open = shared.withLock { state in
            state.closeRequested = true
            return !state.closed
        }
        if open { wake() }
    }

    // MARK: The loop

    private func run() {
        var event = SDL_Event()
        var quit = false
        while !quit {
            if api.SDL_WaitEventTimeout(&event, 20) != 0 {
                quit = handle(event) || quit
                while api.SDL_PollEvent(&event) != 0 { quit = handle(event) || quit }
            }
            if shared.withLock({ $0.closeRequested }) { quit = true }
            if !quit { drawIfNeeded() }
        }
        tearDown()
    }

    private func tearDown() {
        // Reported before the window counts as closed: whoever waits for the close sees the action first.
        report(.quit)
        if audioDevice != 0 { api.SDL_CloseAudioDevice(audioDevice) }
        ring?.close()
        ring = nil
        trace?.write()
        if let video { api.SDL_DestroyTexture(video.texture) }
        if let preview { api.SDL_DestroyTexture(preview.texture) }
        video = nil
        preview = nil
        api.SDL_DestroyRenderer(renderer)
        api.SDL_DestroyWindow(window)
        api.SDL_Quit()
        let waiters = shared.withLock { shared in
            shared.closed = true
            return shared.closeWaiters.takeAll()
        }
        waiters.resume()
    }

    func updateDrawable() {
        var width: Int32 = 0
        var height: Int32 = 0
        _ = api.SDL_GetRendererOutputSize(renderer, &width, &height)
        shared.withLock { $0.drawable = PixelSize(width: max(1, Int(width)), height: max(1, Int(height))) }
    }

    /// The drawable size.
    var drawable: (width: Int, height: Int) {
        var width: Int32 = 0
        var height: Int32 = 0
        _ = api.SDL_GetRendererOutputSize(renderer, &width, &height)
        return (max(1, Int(width)), max(1, Int(height)))
    }

    /// Window coordinates (events) to drawable pixels.
    func toDrawable(_ x: Int32, _ y: Int32) -> (x: Int, y: Int) {
        var width: Int32 = 0
        var height: Int32 = 0
        api.SDL_GetWindowSize(window, &width, &height)
        let size = drawable
        return (
            Int(x) * size.width / max(1, Int(width)), Int(y) * size.height / max(1, Int(height))
        )
    }

    var player: Player? { shared.withLock { $0.player?.player } }

    func report(_ action: WindowAction) {
        shared.withLock { $0.onAction }?(action)
    }
}
