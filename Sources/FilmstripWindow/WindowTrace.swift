import FilmstripSync
import Foundation

/// The window's timing, for measuring it against a capture of the screen and the sound server: each picture handed
/// over and drawn, each PCM buffer queued, each pull of the audio device, on the wall clock (the clock an `x11grab`
/// and `pulse` capture stamp their frames with). Kept in memory (it grows with every pull, about 50 lines a second,
/// so it is meant for measuring runs) and written when the window closes, to the file `FILMSTRIP_WINDOW_TRACE`
/// names; `make bench` reads it to tell the sound's part of an A/V offset from the picture's.
///
/// One line per event:
/// - `SECONDS device RATE CHANNELS PERIOD_FRAMES LATENCY`: the audio device opened, with its estimated latency;
/// - `SECONDS handed MEDIA_TIME`: the player's display call; `SECONDS presented MEDIA_TIME`: its picture drawn;
/// - `SECONDS queued MEDIA_TIME DURATION`, `SECONDS cleared`: PCM put in the device's ring, and the ring emptied;
/// - `SECONDS pulled DURATION SHORT`: a pull of the device (`SHORT`: seconds of it the ring could not fill).
final class WindowTrace: Sendable {
    enum Event {
        case device(sampleRate: Int, channels: Int, periodFrames: Int, latency: Double)
        case handed(time: Double)
        case presented(time: Double)
        case queued(time: Double, seconds: Double)
        case pulled(seconds: Double, short: Double)
        case cleared
    }

    let path: String
    private let events = Mutex<[(Double, Event)]>([])

    /// The trace `FILMSTRIP_WINDOW_TRACE` asks for, if any.
    static func fromEnvironment() -> WindowTrace? {
        guard let path = ProcessInfo.processInfo.environment["FILMSTRIP_WINDOW_TRACE"], !path.isEmpty else {
            return nil
        }
        return WindowTrace(path: path)
    }

    init(path: String) {
        self.path = path
        events.withLock { $0.reserveCapacity(1 << 18) }
    }

    func record(_ event: Event) {
        let stamp = wallSeconds()
        events.withLock { $0.append((stamp, event)) }
    }

    /// Writes the trace; a failure to write is reported on standard error, the window closes anyway.
    func write() {
        var text = ""
        for (stamp, event) in events.withLock({ $0 }) {
            let seconds = String(format: "%.6f", stamp)
            switch event {
            case .device(let rate, let channels, let frames, let latency):
                text += "\(seconds) device \(rate) \(channels) \(frames) \(latency)\n"
            case .handed(let time): text += "\(seconds) handed \(time)\n"
            case .presented(let time): text += "\(seconds) presented \(time)\n"
            case .queued(let time, let length): text += "\(seconds) queued \(time) \(length)\n"
            case .pulled(let length, let short): text += "\(seconds) pulled \(length) \(short)\n"
            case .cleared: text += "\(seconds) cleared\n"
            }
        }
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            FileHandle.standardError.write(Data("cannot write the window trace \(path): \(error)\n".utf8))
        }
    }
}

/// Seconds on the wall clock (the clock `x11grab` and the `pulse` input stamp their captures with).
func wallSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}
