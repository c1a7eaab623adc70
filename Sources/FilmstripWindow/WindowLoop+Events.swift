import CSDL
import Filmstrip
import Foundation

/// Keys, the pointer and the window's own events, turned into the player's commands.
extension WindowLoop {
    /// Seconds a key moves the playhead, the volume's step and the rate's.
    static let seekStep = 5.0
    static let volumeStep = 0.1
    static let rateStep = 0.25

    /// Handles one event; true when the window is to close.
    func handle(_ event: SDL_Event) -> Bool {
        let type = event.type
        if type == wakeEvent {
            shared.withLock { $0.wakePending = false }
            return false
        }
        switch type {
        case SDL_QUIT.rawValue:
            return true
        case SDL_WINDOWEVENT.rawValue:
            let kind = UInt32(event.window.event)
            if kind == SDL_WINDOWEVENT_CLOSE.rawValue { return true }
            if kind == SDL_WINDOWEVENT_SIZE_CHANGED.rawValue || kind == SDL_WINDOWEVENT_RESIZED.rawValue {
                updateDrawable()
                let size = drawable
                report(.resized(width: size.width, height: size.height))
            }
            if kind == SDL_WINDOWEVENT_LEAVE.rawValue, !dragging { pointer = nil }
            dirty = true
        case SDL_KEYDOWN.rawValue:
            return key(event.key.keysym.sym, repeated: event.key.repeat != 0)
        case SDL_MOUSEMOTION.rawValue:
            pointer = toDrawable(event.motion.x, event.motion.y)
            lastMotion = now
            dirty = true
            hover()
            if dragging, now - lastDragSeek >= 0.1, let time = barTime() { seek(to: time) }
        case SDL_MOUSEBUTTONDOWN.rawValue where event.button.button == UInt8(SDL_BUTTON_LEFT):
            pointer = toDrawable(event.button.x, event.button.y)
            lastMotion = now
            if event.button.clicks >= 2 {
                toggleFullscreen()
            } else if let time = barTime() {
                dragging = true
                seek(to: time)
            }
            dirty = true
        case SDL_MOUSEBUTTONUP.rawValue where event.button.button == UInt8(SDL_BUTTON_LEFT):
            // The drag's end, unless the press already sought there.
            if dragging, let time = barTime(), time != lastSought { seek(to: time) }
            dragging = false
            dirty = true
        default:
            break
        }
        return false
    }

    private func key(_ symbol: SDL_Keycode, repeated: Bool) -> Bool {
        func code(_ key: SDL_KeyCode) -> SDL_Keycode { SDL_Keycode(key.rawValue) }
        guard let player else { return symbol == code(SDLK_q) }
        switch symbol {
        case code(SDLK_q):
            return true
        case code(SDLK_ESCAPE) where !fullscreen:
            return true
        case code(SDLK_ESCAPE):
            toggleFullscreen()
        case code(SDLK_SPACE) where !repeated:
            let playing = [.playing, .play, .buffering].contains(player.state.kind)
            if playing { player.pause() } else { player.play() }
            report(.play(!playing))
        case code(SDLK_LEFT), code(SDLK_RIGHT):
            let step = symbol == code(SDLK_LEFT) ? -Self.seekStep : Self.seekStep
            seek(to: player.currentTime + step)
        case code(SDLK_UP), code(SDLK_DOWN):
            let step = symbol == code(SDLK_UP) ? Self.volumeStep : -Self.volumeStep
            // In tenths, so steps add up exactly.
            let volume = min(1, max(0, ((player.volume + step) * 10).rounded() / 10))
            player.volume = volume
            report(.volume(volume))
        case code(SDLK_m) where !repeated:
            player.isMuted.toggle()
            report(.mute(player.isMuted))
        case code(SDLK_LEFTBRACKET), code(SDLK_RIGHTBRACKET):
            let step = symbol == code(SDLK_LEFTBRACKET) ? -Self.rateStep : Self.rateStep
            let range = player.playbackRateRange
            var rate = ((player.playbackRate + step) / Self.rateStep).rounded() * Self.rateStep
            rate = min(range.upperBound, max(range.lowerBound, rate))
            // Rate 0 would stop the clock: the step goes past it.
            if rate == 0 { rate = step > 0 ? Self.rateStep : -Self.rateStep }
            guard range.contains(rate) else { return false }
            player.playbackRate = rate
            report(.rate(rate))
        case code(SDLK_a) where !repeated:
            let tracks = player.audioTracks
            guard tracks.count > 1 else { return false }
            let current = tracks.first(where: \.isSelected)?.index ?? -1
            let next = tracks[(tracks.firstIndex { $0.index == current }.map { $0 + 1 } ?? 0) % tracks.count]
            player.selectAudioTrack(next)
            report(.audioTrack(next.index))
        case code(SDLK_i) where !repeated:
            overlay.toggle()
            dirty = true
            report(.overlay(overlay))
        case code(SDLK_f) where !repeated:
            toggleFullscreen()
        default:
            break
        }
        return false
    }

    func toggleFullscreen() {
        let wanted = !fullscreen
        guard api.SDL_SetWindowFullscreen(window, wanted ? SDL_WINDOW_FULLSCREEN_DESKTOP.rawValue : 0) == 0 else {
            return
        }
        fullscreen = wanted
        updateDrawable()
        dirty = true
        report(.fullscreen(wanted))
    }

    func seek(to time: Double) {
        guard let player else { return }
        let range = player.seekableTimeRanges.first
        let target = range.map { min(max(time, $0.lowerBound), $0.upperBound) } ?? max(0, time)
        player.seek(target)
        lastDragSeek = now
        lastSought = time
        report(.seek(target))
    }

    // MARK: The seek bar

    /// The seek bar over the drawable, when there is a seekable range to span.
    var seekBar: SeekBar? {
        guard let range = player?.seekableTimeRanges.first, range.upperBound > range.lowerBound else { return nil }
        return SeekBar(size: drawable, timeline: range)
    }

    /// Whether the bar is shown: the pointer near the bottom and moved in the last 3 s, or a drag.
    var barVisible: Bool {
        guard let pointer, let bar = seekBar else { return false }
        return bar.shown(pointerY: pointer.y, idle: now - lastMotion, dragging: dragging)
    }

    /// The time under the pointer when the bar is shown.
    func barTime() -> Double? {
        guard barVisible, let pointer, let bar = seekBar else { return nil }
        return bar.time(at: pointer.x)
    }

    /// Asks for the preview under the pointer (the latest ask wins; one fetch at a time) and prefetches around it.
    func hover() {
        guard let time = barTime() else { return }
        let ask = shared.withLock { state -> (ScrubPreviews, Double?)? in
            guard let previews = state.previews else { return nil }
            let previous = state.previewWanted
            state.previewWanted = time
            guard !state.previewBusy else { return nil }
            state.previewBusy = true
            return (previews, previous)
        }
        guard let (previews, previous) = ask else { return }
        previews.prefetch(around: time, direction: time >= (previous ?? time) ? .forward : .backward)
        let shared = self.shared
        let loop = self
        Task.detached {
            var asked: Double? = time
            while let time = asked {
                let found = await previews.thumbnail(at: time)
                asked = shared.withLock { state -> Double? in
                    if let found {
                        state.preview = (time, found.image, found.cue)
                        state.previewSerial += 1
                    }
                    guard let wanted = state.previewWanted, wanted != time else {
                        state.previewBusy = false
                        return nil
                    }
                    return wanted
                }
                loop.wake()
            }
        }
    }
}
