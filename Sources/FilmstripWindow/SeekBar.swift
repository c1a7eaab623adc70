import Filmstrip
import Foundation

/// Where the seek bar, its preview and the statistics go in a drawable of a given size, and which time the pointer
/// is over: the window's layout as values, apart from its drawing.
struct SeekBar {
    /// Drawable pixels at the bottom of the window where the pointer shows the bar.
    static let zone = 72
    /// Seconds the bar stays after the pointer last moved.
    static let lingering = 3.0

    /// The drawable's size.
    let size: (width: Int, height: Int)
    /// What the bar spans: the seekable range.
    let timeline: ClosedRange<Double>

    /// The bar's track, in drawable pixels.
    var track: (x: Int, y: Int, width: Int, height: Int) {
        let margin = max(12, size.width / 40)
        return (margin, size.height - 30, max(1, size.width - 2 * margin), 6)
    }

    /// Whether a pointer at height `y`, moved `idle` seconds ago, shows the bar (a drag always does).
    func shown(pointerY y: Int, idle: Double, dragging: Bool) -> Bool {
        dragging || (y >= size.height - Self.zone && idle < Self.lingering)
    }

    /// The time under a pointer at `x`, clamped to the bar's ends.
    func time(at x: Int) -> Double {
        let bar = track
        let fraction = min(1, max(0, Double(x - bar.x) / Double(bar.width)))
        return timeline.lowerBound + fraction * (timeline.upperBound - timeline.lowerBound)
    }

    /// How far along the bar `time` is, 0 to 1.
    func fraction(of time: Double) -> Double {
        min(1, max(0, (time - timeline.lowerBound) / (timeline.upperBound - timeline.lowerBound)))
    }

    /// The text scale: 2 from 600 drawable pixels high.
    var scale: Int { size.height >= 600 ? 2 : 1 }

    /// A preview of `width`x`height` pixels, shown a fifth of the drawable wide (160 to 320 px) at its aspect
    /// ratio, centred on `x` within the drawable, its bottom at `bottom`.
    func preview(width: Int, height: Int, at x: Int, above bottom: Int) -> (x: Int, y: Int, width: Int, height: Int) {
        let shown = min(320, max(160, size.width / 5))
        let tall = shown * height / max(1, width)
        let left = min(max(4, x - shown / 2), size.width - shown - 4)
        return (left, max(4, bottom - tall), shown, tall)
    }

    /// `m:ss` or `h:mm:ss`.
    static func clockText(_ seconds: Double) -> String {
        let total = Int(max(0, seconds.isFinite ? seconds : 0))
        let (h, m, s) = (total / 3600, total / 60 % 60, total % 60)
        return h > 0 ? String(format: "%d:%02d:%02d", h, m, s) : String(format: "%d:%02d", m, s)
    }

    /// The statistics overlay's lines for `player`, with the window's own frame counts.
    static func statisticsLines(_ player: Player, received: Int, drawn: Int) -> [String] {
        let stats = player.getStats()
        var lines = [
            "STATE \(player.state.kind.rawValue)",
            String(format: "POSITION %.2f / %.2f S", player.currentTime, stats?.duration ?? 0),
            String(
                format: "RATE %g  VOLUME %d%%%@", player.playbackRate, Int((player.volume * 100).rounded()),
                player.isMuted ? "  MUTED" : ""),
            String(format: "BUFFER %.1f S", stats?.bufferLength ?? 0),
        ]
        if let bitrate = stats?.bitrate { lines.append("BITRATE \(bitrate / 1000) KBPS") }
        lines.append(
            "FRAMES \(stats?.presentedFrames ?? 0) SHOWN, \(stats?.droppedFrames ?? 0) DROPPED, \(drawn)/\(received) DRAWN"
        )
        if let drift = stats?.avDrift { lines.append(String(format: "A/V %+.0f MS", drift * 1000)) }
        return lines
    }
}
