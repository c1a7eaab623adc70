import CSDL
public import Filmstrip
import FilmstripSync
import Foundation

/// What a person did in a ``WindowOutput``, after the player was told (``WindowOutput/onAction``).
public enum WindowAction: Sendable, Hashable {
    /// Space: play (`true`) or pause.
    case play(Bool)
    /// ←/→ (5 s), or a click or drag on the seek bar: the time asked for.
    case seek(Double)
    /// ↑/↓: the player's volume, 0...1 in steps of 0.1.
    case volume(Double)
    /// `m`: muted or not.
    case mute(Bool)
    /// `[`/`]`: the rate asked for (0.25 steps within the player's range).
    case rate(Double)
    /// `a`: the audio track asked for (an index into ``Player/audioTracks``).
    case audioTrack(Int)
    /// `i`: the statistics overlay shown or hidden.
    case overlay(Bool)
    /// `f` or a double click: fullscreen or not.
    case fullscreen(Bool)
    /// The window's drawable size changed.
    case resized(width: Int, height: Int)
    /// A preview is shown above the seek bar for `time`, from the cue starting at `cue`.
    case preview(time: Double, cue: Double)
    /// `q` or the window was closed.
    case quit
}

/// The player on a screen: an SDL2 window that shows a ``Player``'s frames and plays its sound on the system's
/// audio device, with keys, a seek bar and scrub previews. It is the player's ``VideoOutput`` (taking 8-bit 4:2:0
/// pictures as Y′CbCr planes, which the renderer converts while drawing; 10-bit and HDR pictures come tone-mapped to
/// RGB at the window's size) and its ``AudioOutput`` (PCM queued on the device at the device's own rate; what the
/// device holds is in ``latency``, so the picture follows the sound).
///
/// ```swift
/// let window = try WindowOutput(title: "movie.mp4")
/// window.control(player)                       // attaches video and audio; keys and the bar drive the player
/// player.open(config: PlayerConfiguration(with: url))
/// window.previews = try await ScrubPreviews.load(for: player)
/// await window.waitUntilClosed()
/// ```
///
/// Keys: space play/pause, ←/→ 5 s, ↑/↓ volume, `m` mute, `[`/`]` rate, `a` next audio track, `i` statistics, `f`
/// (or a double click) fullscreen, `q` quit. Moving the pointer to the bottom shows the seek bar; hovering shows
/// the preview for that time; a click or a drag seeks.
///
/// SDL2 is loaded when the first window opens (not when the program starts). The window runs on a thread of its
/// own; every method may be called from any thread.
public final class WindowOutput: VideoOutput, AudioOutput, @unchecked Sendable {
    /// The PCM format of the audio device (its own rate and channel count), or 48 kHz stereo without one.
    public let format: AudioFormat
    /// Why there is no sound, when the audio device could not be opened (video then runs on the system clock).
    public let audioWarning: String?
    /// Whether sound goes to an audio device.
    public var hasAudio: Bool { audio != nil }

    let shared = WindowShared()
    let audio: WindowAudio?
    private let loop: WindowLoop

    /// Opens a window of `size` (resizable) titled `title`, and the default audio device unless `audio` is false.
    ///
    /// - Throws: ``WindowError`` when there is no display (`DISPLAY` and `WAYLAND_DISPLAY` unset), SDL2 is not
    ///   installed, or the window cannot be made. A missing audio device is not an error: see ``audioWarning``.
    public init(
        title: String = "Filmstrip", size: PixelSize = PixelSize(width: 960, height: 540), audio: Bool = true
    )
        throws
    {
        guard SDLLibrary.displayAvailable() else {
            throw WindowError(
                "no display: DISPLAY and WAYLAND_DISPLAY are unset (run on a desktop, or under Xvfb: xvfb-run)")
        }
        let api = try SDLLibrary.load()
        let opened = try WindowLoop.open(api: api, title: title, size: size, audio: audio, shared: shared)
        loop = opened.loop
        self.audio = opened.audio
        format = opened.audio?.format ?? .standard
        audioWarning = opened.audioWarning
    }

    deinit { close() }

    /// Attaches the window to `player` as its video output and (with a device) its audio output, and lets the keys and
    /// the seek bar drive it. Call before loading content (the audio format is read at load).
    public func control(_ player: Player) {
        player.attach(to: self)
        if hasAudio { player.attach(audio: self) }
        shared.withLock { $0.player = WeakPlayer(player) }
    }

    /// The previews the seek bar shows (see ``ScrubPreviews/load(for:sidecar:sdk:)``); none by default.
    public var previews: ScrubPreviews? {
        get { shared.withLock { $0.previews } }
        set { shared.withLock { $0.previews = newValue } }
    }

    /// Called after each action taken from a key, the pointer or the window (on the window's thread).
    public var onAction: (@Sendable (WindowAction) -> Void)? {
        get { shared.withLock { $0.onAction } }
        set { shared.withLock { $0.onAction = newValue } }
    }

    /// Whether the window was closed (`q`, the close button, or ``close()``).
    public var isClosed: Bool { shared.withLock { $0.closed } }

    /// Frames handed to the window, and frames it drew (a frame replaced before it could be drawn is not).
    public var frameCounts: (received: Int, drawn: Int) { shared.withLock { ($0.received, $0.drawn) } }

    /// Closes the window and the audio device.
    public func close() {
        loop.requestClose()
    }

    /// Waits until the window is closed.
    public func waitUntilClosed() async {
        await shared.wait(in: \.closeWaiters) { $0.closed }
    }

    // MARK: VideoOutput

    public var acceptsPlanarYUV: Bool { true }

    /// The window's drawable size: RGB pictures (10-bit, HDR) are converted at it.
    public var preferredMaximumSize: PixelSize? { shared.withLock { $0.drawable } }

    /// How long the window takes to show a picture it is handed (its upload and present), measured as it draws; the
    /// player hands pictures over that much early.
    public var presentationDelay: Double { shared.withLock { $0.presentationDelay } }

    public func display(_ frame: PlanarYUVFrame, at time: Double) { show(.planar(frame), at: time) }

    public func display(_ image: PixelBuffer, at time: Double) { show(.rgb(image), at: time) }

    private func show(_ picture: WindowState.Picture, at time: Double) {
        loop.trace?.record(.handed(time: time))
        let wake = shared.withLock { state in
            state.picture = picture
            state.pictureTime = time
            state.pictureHanded = monotonicSeconds()
            state.serial += 1
            state.received += 1
            defer { state.wakePending = true }
            return !state.wakePending
        }
        if wake { loop.wake() }
    }

    // MARK: AudioOutput

    public var latency: Double { audio?.latency ?? 0 }
    public var preferredLead: Double { audio?.lead ?? 0 }
    public func play(_ buffer: AudioBuffer) { audio?.queue(buffer) }
    public func flush() { audio?.clear() }
}

/// A player held weakly (the window must not keep it alive).
struct WeakPlayer: @unchecked Sendable {
    weak var player: Player?
    init(_ player: Player) { self.player = player }
}

/// The window's state, under a lock (the window's thread, the player's and the app's share it).
final class WindowShared: Sendable {
    private let mutex = Mutex(WindowState())

    func withLock<T>(_ body: (inout WindowState) -> T) -> T { mutex.withLock { body(&$0) } }

    func wait(
        in waiters: any WritableKeyPath<WindowState, Waiters> & Sendable,
        until satisfied: (borrowing WindowState) -> Bool
    ) async {
        await mutex.wait(in: waiters, until: satisfied)
    }
}

/// What the window's thread and the player's share.
struct WindowState {
    enum Picture {
        case planar(PlanarYUVFrame)
        case rgb(PixelBuffer)
    }

    var picture: Picture?
    /// The media time of `picture` (for the timing trace), and when it was handed over (monotonic seconds).
    var pictureTime = 0.0
    var pictureHanded = 0.0
    /// The time from a picture's being handed over to its present, smoothed over the pictures drawn.
    var presentationDelay = 0.0
    /// Counts pictures handed over; the window draws when it moved.
    var serial = 0
    var received = 0
    var drawn = 0
    /// A wake-up event is on SDL's queue and not yet handled.
    var wakePending = false
    var drawable: PixelSize?
    var player: WeakPlayer?
    var previews: ScrubPreviews?
    var onAction: (@Sendable (WindowAction) -> Void)?
    var closed = false
    /// Callers of ``WindowOutput/waitUntilClosed()``, resumed as the window closes.
    var closeWaiters = Waiters()
    var closeRequested = false
    /// The preview shown above the bar: the time it was asked for, and the image with its cue.
    var preview: (time: Double, image: PixelBuffer, cue: ClosedRange<Double>)?
    var previewSerial = 0
    /// The time the pointer asks a preview for, and whether a fetch is under way.
    var previewWanted: Double?
    var previewBusy = false
}
