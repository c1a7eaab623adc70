import Testing

@testable import FilmstripWindow

@Suite("The window's seek bar layout")
struct SeekBarTests {
    let bar = SeekBar(size: (1280, 720), timeline: 10...130)

    @Test("the track spans the width less a margin, 30 px from the bottom; the pointer's x is a time, clamped")
    func track() {
        #expect(bar.track == (32, 690, 1216, 6))
        #expect(bar.time(at: 32) == 10)
        #expect(bar.time(at: 32 + 608) == 70)
        #expect(bar.time(at: 0) == 10 && bar.time(at: 5000) == 130)
        #expect(bar.fraction(of: 40) == 0.25 && bar.fraction(of: 0) == 0 && bar.fraction(of: 999) == 1)
        // A narrow window keeps a 12 px margin.
        #expect(SeekBar(size: (320, 240), timeline: 0...1).track == (12, 210, 296, 6))
    }

    @Test("the bar shows in the bottom zone for 3 s after the pointer moved, or while dragging")
    func shown() {
        #expect(bar.shown(pointerY: 700, idle: 1, dragging: false))
        #expect(!bar.shown(pointerY: 700, idle: 3.5, dragging: false))
        #expect(!bar.shown(pointerY: 600, idle: 0, dragging: false))
        #expect(bar.shown(pointerY: 10, idle: 60, dragging: true))
        #expect(bar.scale == 2 && SeekBar(size: (640, 360), timeline: 0...1).scale == 1)
    }

    @Test("a preview is a fifth of the width (160 to 320 px) at its aspect ratio, centred on the pointer, inside")
    func preview() {
        #expect(bar.preview(width: 160, height: 90, at: 640, above: 600) == (512, 456, 256, 144))
        // Near an edge it stays 4 px inside the window.
        #expect(bar.preview(width: 160, height: 90, at: 1270, above: 600).x == 1280 - 256 - 4)
        #expect(bar.preview(width: 160, height: 90, at: 0, above: 600).x == 4)
        #expect(
            SeekBar(size: (4000, 2000), timeline: 0...1).preview(width: 16, height: 9, at: 0, above: 90).width == 320)
    }

    @Test("clock text: m:ss, h:mm:ss past an hour, 0:00 for what is not a time")
    func clock() {
        #expect(SeekBar.clockText(65) == "1:05")
        #expect(SeekBar.clockText(3725) == "1:02:05")
        #expect(SeekBar.clockText(.nan) == "0:00" && SeekBar.clockText(-4) == "0:00")
    }
}
