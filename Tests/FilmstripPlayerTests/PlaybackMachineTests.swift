import FilmstripSync
import FilmstripTesting
import Foundation
import Testing

@testable import FilmstripPlayer

/// A playback machine driven by a `TestClock`: every event happens at the clock's time, and time passes only when
/// the test advances it.
private struct Driver {
    typealias Action = PlaybackMachine.Action
    let clock = TestClock()
    var machine: PlaybackMachine
    /// Every state entered, in order.
    var states: [PlayerState.Kind] = []
    var reports: [PlayerError] = []

    init(_ configure: (inout PlayerConfiguration) -> Void = { _ in }) {
        var configuration = PlayerConfiguration(with: URL(fileURLWithPath: "/clip.mp4"))
        configure(&configuration)
        machine = PlaybackMachine(settings: .init(configuration))
    }

    var now: Double { clock.now.offset.seconds }

    func advance(_ seconds: Double) async { await clock.advance(by: .milliseconds(Int(seconds * 1000))) }

    @discardableResult
    mutating func record(_ actions: [Action]) -> [Action] {
        for action in actions {
            if case .changed(_, let current, _) = action { states.append(current.kind) }
            if case .report(let error) = action { reports.append(error) }
        }
        return actions
    }

    /// Loads a 60 s file and opens it.
    mutating func open(autoplay: Bool = true, duration: Double = 60) {
        record(machine.load(machine.settings, at: now))
        record(machine.opened(duration: duration, at: now))
        record(machine.open(autoplay: autoplay, at: now))
    }

    @discardableResult
    mutating func step(frame: Double?, seconds: Double = 0, ended: Bool = false) -> [Action] {
        record(machine.step(PlaybackMachine.Buffer(frame: frame, ended: ended, seconds: seconds), at: now))
    }

    /// Plays from a full buffer: `play` -> `playing`, the clock anchored at the first frame (time 0).
    mutating func startPlaying() {
        open()
        step(frame: 0, seconds: 5)
    }
}

@Suite("Playback decisions on a test clock")
struct PlaybackMachineTests {
    @Test("every wait the machine asks for ends after now, in every state: an idle or stopping player never spins")
    func waitsEndLater() async {
        func deadlines(_ actions: [PlaybackMachine.Action]) -> [Double] {
            actions.compactMap {
                switch $0 {
                case .wait(let until), .awaitBuffer(let until): until
                default: nil
                }
            }
        }
        var driver = Driver()
        driver.open()
        driver.startPlaying()
        for _ in 0..<3 {
            await driver.advance(2.5)
            #expect(deadlines(driver.step(frame: driver.now + 0.04, seconds: 5)).allSatisfy { $0 > driver.now })
        }
        driver.record(driver.machine.stop(at: driver.now))
        // A release that lasts, then idle: seconds past the last statistics, the waits still end in the future.
        await driver.advance(3)
        #expect(deadlines(driver.step(frame: nil)).allSatisfy { $0 > driver.now }, "stopping")
        driver.record(driver.machine.released(at: driver.now))
        await driver.advance(30)
        let idle = driver.step(frame: nil)
        #expect(driver.machine.state.kind == .idle && !deadlines(idle).isEmpty)
        #expect(deadlines(idle).allSatisfy { $0 > driver.now }, "idle: \(deadlines(idle)) at \(driver.now)")
    }

    @Test("a clock that jumps to each deadline named: every step there moves on (1.8 + 1 is 2.8, 2.8 - 1.8 is not 1)")
    func deadlinesReached() async {
        var driver = Driver()
        await driver.advance(1.8)
        driver.open()
        var seen: [Double] = []
        for _ in 0..<60 {
            let next = driver.step(frame: nil).compactMap { action -> Double? in
                switch action {
                case .wait(let until), .awaitBuffer(let until): until
                default: nil
                }
            }.min()
            // A step that changed the state names no deadline: the engine steps again at once.
            guard let next else { continue }
            #expect(next > driver.now, "a deadline of now at \(driver.now) in \(driver.states)")
            guard next > driver.now else { break }
            seen.append(next)
            await driver.clock.advance(by: .seconds(next) - driver.clock.now.offset)
        }
        #expect(driver.states.contains(.buffering) && seen.count >= 40, "\(seen) \(driver.states)")
    }

    @Test("start: play waits for minPrebufferTime, shows buffering after the grace, then plays")
    func start() async {
        var driver = Driver()
        driver.open()
        #expect(driver.states == [.opening, .ready, .play])
        // Below the 2 s threshold, within the grace: wait for data, no state change.
        let early = driver.step(frame: 0, seconds: 0.5)
        // Until the start's grace is over, or sooner once the buffers change.
        #expect(early.contains { if case .awaitBuffer(let until) = $0 { until == driver.now + 0.2 } else { false } })
        await driver.advance(0.2)
        driver.step(frame: 0, seconds: 0.5)
        #expect(driver.states.last == .buffering)
        await driver.advance(1)
        driver.step(frame: 0, seconds: 2)
        driver.step(frame: 0, seconds: 2)
        #expect(driver.states.suffix(3) == [.buffering, .play, .playing])
        #expect(driver.machine.clock.running && driver.machine.clock.wall == driver.now)
    }

    @Test("thresholds above maxPrebufferTime are lowered to it, so a small buffer can start")
    func thresholdCapped() {
        var driver = Driver { $0.maxPrebufferTime = 1 }
        driver.open()
        driver.step(frame: 0, seconds: 1)
        #expect(driver.states.last == .playing)
    }

    @Test("frames: waited for until due, shown on time, dropped when late; the rate scales the clock")
    func frameTiming() async {
        var driver = Driver()
        driver.startPlaying()
        #expect(driver.step(frame: 0).contains(.present))
        // The next frame is due 40 ms later: wait exactly until then.
        #expect(driver.step(frame: 0.04) == [.wait(until: driver.now + 0.04)])
        await driver.advance(0.04)
        #expect(driver.step(frame: 0.04).contains(.present))
        // 200 ms late: dropped and counted.
        await driver.advance(0.28)
        #expect(driver.step(frame: 0.08) == [.drop])
        #expect(driver.machine.statistics(at: driver.now).droppedFrames == 1)
        // At rate 2, a frame 1 s of media ahead is due in 0.5 s of clock time.
        driver.record(driver.machine.setRate(2, at: driver.now))
        let position = driver.machine.currentTime(at: driver.now)
        #expect(driver.step(frame: position + 1) == [.wait(until: driver.now + 0.1)])
        await driver.advance(0.5)
        #expect(driver.step(frame: position + 1).contains(.present))
        #expect(abs(driver.machine.currentTime(at: driver.now) - (position + 1)) < 1e-9)
    }

    @Test("a stall: starved, buffering, resumed at minRebufferTime; counted with its exact duration")
    func stall() async {
        var driver = Driver { $0.minRebufferTime = 3 }
        driver.startPlaying()
        await driver.advance(4)
        let stalled = driver.step(frame: nil)
        #expect(stalled.contains(.starved))
        #expect(driver.states.last == .buffering)
        #expect(abs(driver.machine.currentTime(at: driver.now) - 4) < 1e-9)
        await driver.advance(2.5)
        driver.step(frame: 4.04, seconds: 2.9)
        #expect(driver.states.last == .buffering)
        #expect(driver.machine.statistics(at: driver.now).rebufferTime == 2.5)
        driver.step(frame: 4.04, seconds: 3)
        driver.step(frame: 4.04, seconds: 3)
        #expect(driver.states.suffix(3) == [.buffering, .play, .playing])
        let stats = driver.machine.statistics(at: driver.now)
        #expect(stats.rebufferCount == 1 && stats.rebufferTime == 2.5)
    }

    @Test("backwards: frames are due as the clock runs back at the rate; the start pauses playback there")
    func reverse() async {
        var driver = Driver()
        driver.startPlaying()
        await driver.advance(4)
        driver.record(driver.machine.setRate(-2, at: driver.now))
        #expect(abs(driver.machine.currentTime(at: driver.now) - 4) < 1e-9)
        // A frame 1 s of media back is due in 0.5 s.
        #expect(driver.step(frame: 3).filter { $0 != .publishStatistics } == [.wait(until: driver.now + 0.1)])
        await driver.advance(0.5)
        #expect(driver.step(frame: 3).contains(.present))
        #expect(abs(driver.machine.currentTime(at: driver.now) - 3) < 1e-9)
        // 200 ms late going backwards is late too.
        await driver.advance(0.6)
        #expect(driver.step(frame: 2.5).filter { $0 != .publishStatistics } == [.drop])
        // Nothing before the start: the clock stops at 0 (never below), and playback pauses there.
        await driver.advance(0.5)
        #expect(driver.step(frame: nil, ended: true) == [.wait(until: driver.now + 0.1)])
        await driver.advance(5)
        #expect(driver.machine.currentTime(at: driver.now) == 0)
        driver.step(frame: nil, ended: true)
        #expect(driver.states.suffix(2) == [.pausing, .paused])
        #expect(driver.machine.currentTime(at: driver.now) == 0 && !driver.machine.wantsPlay)
    }

    @Test("the end: no frame and nothing more to decode is ended at the duration; play starts over from 0")
    func end() async {
        var driver = Driver()
        driver.startPlaying()
        await driver.advance(61)
        driver.step(frame: nil, ended: true)
        #expect(driver.states.last == .ended)
        #expect(driver.machine.currentTime(at: driver.now) == 60)
        let again = driver.record(driver.machine.play(at: driver.now))
        #expect(again.contains(.seekSource(0)) && driver.states.last == .seeking)
        driver.step(frame: 0)
        #expect(driver.states.suffix(2) == [.seeking, .play])
    }

    @Test("a frame past the duration (an estimate from the bitrate) lengthens it: playback goes on to the real end")
    func pastTheDuration() async {
        var driver = Driver()
        driver.open(duration: 1)
        driver.step(frame: 0, seconds: 5)
        await driver.advance(1.4)
        let shown = driver.step(frame: 1.4)
        #expect(shown.contains { if case .present = $0 { true } else { false } }, "\(shown)")
        #expect(driver.machine.clock.duration == 1.4)
        await driver.advance(0.5)
        driver.step(frame: nil, ended: true)
        #expect(driver.states.last == .ended)
        #expect(driver.machine.currentTime(at: driver.now) == 1.4)
    }

    @Test("a seek: seeking until the target's frame; without one in 0.25 s, buffering shows it; paused stays paused")
    func seek() async {
        var driver = Driver()
        driver.startPlaying()
        driver.record(driver.machine.seek(to: 30, at: driver.now))
        #expect(driver.states.last == .seeking)
        await driver.advance(0.1)
        driver.step(frame: nil)
        #expect(driver.states.last == .seeking)
        await driver.advance(0.15)
        driver.step(frame: nil)
        #expect(driver.states.last == .buffering)
        #expect(driver.step(frame: 30, seconds: 2).contains(.present))
        #expect(driver.states.suffix(2) == [.buffering, .play])
        // Paused during a seek: the target's frame is shown and the player waits paused.
        driver.record(driver.machine.seek(to: 10, at: driver.now))
        driver.record(driver.machine.pause(at: driver.now))
        #expect(driver.step(frame: 10).contains(.present))
        #expect(driver.states.suffix(3) == [.seeking, .pausing, .paused])
        #expect(driver.machine.currentTime(at: driver.now) == 10)
    }

    @Test("autoplay policy: allowed plays; muted only plays muted; denied goes play -> pausing and waits paused")
    func autoplay() async {
        var allowed = Driver()
        allowed.open()
        #expect(allowed.states == [.opening, .ready, .play] && !allowed.machine.muted)

        var muted = Driver { $0.autoplayPolicy = .mutedOnly }
        muted.open()
        #expect(muted.states == [.opening, .ready, .play] && muted.machine.muted)
        #expect(muted.machine.statistics(at: muted.now).audioMuted)

        var denied = Driver { $0.autoplayPolicy = .denied }
        denied.open()
        #expect(denied.states == [.opening, .ready, .play, .pausing, .buffering])
        #expect(denied.reports.map(\.type) == [.autoplayRefused])
        // The first frame is shown, then the player waits paused; an explicit play() plays.
        #expect(denied.step(frame: 0, seconds: 5).contains(.present))
        #expect(denied.states.last == .paused)
        denied.record(denied.machine.play(at: denied.now))
        denied.step(frame: 0.04, seconds: 5)
        #expect(denied.states.suffix(2) == [.play, .playing])
        // Without autoplay the policy is not consulted.
        var manual = Driver { $0.autoplayPolicy = .denied }
        manual.open(autoplay: false)
        #expect(manual.reports.isEmpty && manual.states.last == .buffering)
    }

    @Test("state timeouts fire on the clock, once per entry, and never move the player")
    func timeouts() async {
        var driver = Driver()
        driver.open()
        await driver.advance(0.2)
        driver.step(frame: nil)
        #expect(driver.states.last == .buffering)
        await driver.advance(29.9)
        driver.step(frame: nil)
        #expect(driver.reports.isEmpty)
        await driver.advance(0.1)
        driver.step(frame: nil)
        await driver.advance(30)
        driver.step(frame: nil)
        #expect(driver.reports.map(\.type) == [.stateTimeout(.buffering)])
        #expect(driver.reports.first?.severity == .recoverable && driver.states.last == .buffering)
    }

    @Test("commands out of place are refused with a warning and change nothing; errors are final until stop")
    func refusals() {
        var driver = Driver()
        let early = driver.record(driver.machine.play(at: driver.now))
        #expect(early.count == 1 && driver.states.isEmpty)
        #expect(driver.reports.first?.type == .invalidStateTransition)
        driver.startPlaying()
        let reload = driver.record(driver.machine.load(driver.machine.settings, at: driver.now))
        #expect(reload.count == 1 && driver.states.last == .playing)
        let failure = PlayerError(.decodeFailed, severity: .fatal, "broken")
        let failed = driver.record(driver.machine.fail(failure, at: driver.now))
        #expect(failed.last == .release && driver.states.last == .error)
        #expect(driver.record(driver.machine.fail(failure, at: driver.now)).isEmpty)
        driver.record(driver.machine.stop(at: driver.now))
        #expect(driver.states.suffix(2) == [.error, .stopping])
        driver.record(driver.machine.released(at: driver.now))
        #expect(driver.states.suffix(3) == [.error, .stopping, .idle])
    }

    @Test("stopping lasts until the source is released; past 10 s the stopping timeout is reported and it still waits")
    func stoppingTimeout() async {
        var driver = Driver()
        driver.startPlaying()
        let stopped = driver.record(driver.machine.stop(at: driver.now))
        #expect(stopped.contains(.release) && driver.states.last == .stopping)
        // A release that does not end: steps go on, and nothing moves until 10 s have passed.
        await driver.advance(9.9)
        driver.step(frame: nil)
        #expect(driver.reports.isEmpty && driver.states.last == .stopping)
        await driver.advance(0.2)
        driver.step(frame: nil)
        #expect(driver.reports.map(\.type) == [.stateTimeout(.stopping)])
        #expect(driver.reports.first?.severity == .recoverable && driver.states.last == .stopping)
        // Once released: idle; a second stop while stopping changes nothing.
        #expect(driver.record(driver.machine.stop(at: driver.now)).isEmpty)
        driver.record(driver.machine.released(at: driver.now))
        #expect(driver.states.suffix(2) == [.stopping, .idle])
        #expect(driver.record(driver.machine.released(at: driver.now)).isEmpty)
    }

    @Test("live catch-up: the clock runs at rate times the factor from where the playhead is")
    func catchUp() async {
        var driver = Driver()
        driver.startPlaying()
        await driver.advance(10)
        driver.record(driver.machine.setCatchUp(1.1, at: driver.now))
        await driver.advance(10)
        #expect(abs(driver.machine.currentTime(at: driver.now) - 21) < 1e-9)
        #expect(driver.machine.publishedClock.rate == 1.1)
    }

    @Test("the audio clock: far off, the clock jumps to it; near, it moves a tenth of the way per observation")
    func followsTheAudioClock() async {
        var driver = Driver()
        driver.startPlaying()
        await driver.advance(1)
        // 50 ms behind the sound (beyond the 20 ms tolerance): re-anchored at once.
        #expect(driver.machine.follow(audioClock: 1.05, at: driver.now) == [.clockChanged])
        #expect(abs(driver.machine.currentTime(at: driver.now) - 1.05) < 1e-9)
        // 10 ms ahead of it: each observation takes a tenth of the distance off, no jump.
        var drift = 0.01
        for _ in 0..<25 {
            await driver.advance(0.01)
            let heard = driver.machine.currentTime(at: driver.now) - drift
            #expect(driver.machine.follow(audioClock: heard, at: driver.now) == [.clockChanged])
            let next = driver.machine.currentTime(at: driver.now) - heard
            #expect(abs(next - drift * 0.9) < 1e-9)
            drift = next
        }
        #expect(drift < 0.001)
        // Within half a millisecond: left alone.
        #expect(
            driver.machine.follow(audioClock: driver.machine.currentTime(at: driver.now) - 0.0004, at: driver.now)
                .isEmpty)
        // A slew is not a new anchor: a frame late after it is still dropped.
        #expect(driver.step(frame: driver.machine.currentTime(at: driver.now)).contains(.present))
        await driver.advance(0.3)
        _ = driver.machine.follow(audioClock: driver.machine.currentTime(at: driver.now) - 0.005, at: driver.now)
        #expect(driver.step(frame: driver.machine.currentTime(at: driver.now) - 0.25) == [.drop])
    }

    @Test("an output's presentation delay: each frame is handed over that much before its time")
    func presentationDelay() async {
        var driver = Driver()
        driver.startPlaying()
        driver.machine.presentationDelay = 0.008
        #expect(driver.step(frame: 0).contains(.present))
        #expect(driver.step(frame: 0.04) == [.wait(until: driver.now + 0.032)])
        await driver.advance(0.032)
        #expect(driver.step(frame: 0.04).contains(.present))
    }
}
