import Foundation
import Testing

@testable import FilmstripPlayer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("State timeouts")
struct StateTimeoutTests {
    typealias K = PlayerState.Kind

    @Test("the defaults of SPEC 4.4")
    func defaults() {
        let c = StateTimeoutConfiguration()
        let expected: [K: Double] = [
            .idle: 0, .opening: 15, .ready: 10, .buffering: 30, .play: 10, .pausing: 10, .stopping: 10, .seeking: 20,
            .ended: 0, .error: 0, .playing: 0, .paused: 0,
        ]
        for (state, seconds) in expected { #expect(c.seconds(for: state) == seconds, "\(state)") }
    }

    @Test("each default fires once per entry, as a recoverable error, at its deadline", arguments: K.allCases)
    func fires(state: K) {
        let seconds = StateTimeoutConfiguration().seconds(for: state)
        var timeouts = StateTimeoutController(configuration: StateTimeoutConfiguration())
        let deadline = timeouts.enter(state, at: 100)
        guard seconds > 0 else {
            #expect(deadline == nil)
            #expect(timeouts.check(at: 10_000) == nil)
            return
        }
        #expect(deadline == 100 + seconds)
        #expect(timeouts.check(at: 100 + seconds - 0.001) == nil)
        let error = timeouts.check(at: 100 + seconds)
        #expect(error?.type == .stateTimeout(state))
        #expect(error?.type.rawValue == "state_timeout_\(state.rawValue)")
        #expect(error?.severity == .recoverable)
        #expect(timeouts.check(at: 100 + seconds * 3) == nil, "one report per entry")
        timeouts.enter(state, at: 500)
        #expect(timeouts.check(at: 500 + seconds)?.type == .stateTimeout(state), "a new entry re-arms")
    }

    @Test("leaving a state disarms its timer")
    func leaving() {
        var timeouts = StateTimeoutController(configuration: StateTimeoutConfiguration())
        timeouts.enter(.opening, at: 0)  // would fire at 15
        timeouts.enter(.playing, at: 5)  // no timeout
        #expect(timeouts.check(at: 100) == nil)
        timeouts.enter(.seeking, at: 200)
        timeouts.enter(.buffering, at: 210)  // 30 s from 210
        #expect(timeouts.check(at: 220) == nil)
        #expect(timeouts.check(at: 240)?.type == .stateTimeoutBuffering)
    }

    @Test(
        "the per-state initializer keeps every omitted state's default; the other SDKs' names reach the same settings")
    func perStateInitializer() throws {
        let custom = StateTimeoutConfiguration(openingSeconds: 5, bufferingSeconds: 0, seekingSeconds: 7)
        var expected = StateTimeoutConfiguration()
        expected.opening = 5
        expected.buffering = 0
        expected.seeking = 7
        #expect(custom == expected)
        #expect(StateTimeoutConfiguration(openingSeconds: 15) == StateTimeoutConfiguration())
        var config = PlayerConfiguration(with: try #require(URL(string: "https://example.com/a.m3u8")))
        config.stateTimeoutConfiguration = custom
        config.liveConfiguration = LiveConfiguration(behindLiveWindowTolerance: 5)
        config.networkConfiguration = NetworkConfiguration(waitsForConnectivity: false)
        #expect(config.stateTimeouts == custom && config.live.behindLiveWindowTolerance == 5)
        #expect(config.network?.waitsForConnectivity == false)
        config.stateTimeoutConfiguration = nil
        #expect(config.stateTimeouts == nil)
    }

    @Test("0 disables one state; nil disables all")
    func disabling() {
        var configuration = StateTimeoutConfiguration()
        configuration.opening = 0
        var some = StateTimeoutController(configuration: configuration)
        #expect(some.enter(.opening, at: 0) == nil)
        #expect(some.check(at: 1000) == nil)
        #expect(some.enter(.ready, at: 0) == 10)
        var none = StateTimeoutController(configuration: nil)
        for state in K.allCases {
            #expect(none.enter(state, at: 0) == nil)
            #expect(none.check(at: 1e9) == nil)
        }
    }
}

@Suite("Playback rate ranges")
struct PlaybackRateTests {
    @Test("Filmstrip's own engine: 0 and up by default (negative rates clamped with a warning); audio muted above 2")
    func own() {
        let policy = PlaybackRatePolicy(engine: .filmstrip)
        #expect(policy.resolve(1).rate == 1 && !policy.resolve(1).audioMuted && policy.resolve(1).warning == nil)
        let fast = policy.resolve(4)
        #expect(fast.rate == 4 && fast.audioMuted && fast.warning == nil)
        let backwards = policy.resolve(-1)
        #expect(backwards.rate == 0 && backwards.warning?.type == .playbackRateClamped)
        #expect(backwards.warning?.message.contains("allows") == true)
        #expect(policy.resolve(2).audioMuted == false)
        #expect(policy.resolve(.nan).rate == 1)
    }

    @Test("custom ranges: a widened range plays backwards (audio muted), and clamps outside it")
    func custom() {
        let policy = PlaybackRatePolicy(engine: .filmstrip, range: -2...1.5)
        #expect(policy.range == -2...1.5)
        #expect(policy.resolve(1.75).rate == 1.5)
        #expect(policy.resolve(0.5).rate == 0.5)
        let back = policy.resolve(-1)
        #expect(back.rate == -1 && back.audioMuted && back.warning == nil)
        #expect(policy.resolve(-8).rate == -2)
    }
}

@Suite("Live edge")
struct LiveEdgeTests {
    let window = 100.0...160.0

    @Test("behind the live window: start minus the tolerance, reported once per occurrence")
    func behind() {
        var controller = LiveEdgeController(configuration: LiveConfiguration())
        #expect(!controller.isBehindLiveWindow(position: 97, window: window))
        #expect(controller.isBehindLiveWindow(position: 96.9, window: window))
        #expect(
            controller.observe(position: 96.9, window: window, isPlaying: false).warning?.type
                == .playerBehindLiveWindow)
        #expect(controller.observe(position: 95, window: window, isPlaying: false).warning == nil)
        #expect(controller.observe(position: 120, window: window, isPlaying: false).warning == nil)
        #expect(controller.observe(position: 90, window: window, isPlaying: false).warning != nil)
        let tight = LiveEdgeController(configuration: LiveConfiguration(behindLiveWindowTolerance: 0))
        #expect(tight.isBehindLiveWindow(position: 99.9, window: window))
        #expect(!LiveEdgeController(configuration: LiveConfiguration()).isBehindLiveWindow(position: 0, window: 1...60))
    }

    @Test("speed-up: starts above the catch-up threshold, stops at the cutoff (hysteresis)")
    func speedup() {
        var configuration = LiveConfiguration()
        configuration.chaseLiveEdge = .speedupPlayback
        var controller = LiveEdgeController(configuration: configuration)
        func decide(_ position: Double) -> LiveEdgeController.Decision {
            controller.observe(position: position, window: window, isPlaying: true).decision
        }
        #expect(decide(151) == .none)  // 9 s behind
        #expect(decide(149.5) == .setRate(1.1))  // 10.5 s: past the catch-up threshold
        #expect(decide(152) == .none)  // 8 s: still catching up
        #expect(controller.catchingUp)
        #expect(decide(155) == .setRate(1))  // 5 s: the cutoff
        #expect(decide(152) == .none)  // 8 s: below the threshold, not catching up
    }

    @Test("skip: jump to the edge minus the cutoff, on a segment boundary")
    func skip() {
        var configuration = LiveConfiguration()
        configuration.chaseLiveEdge = .skipFrames
        configuration.chaseLiveEdgeHLSSegmentDuration = 6
        var controller = LiveEdgeController(configuration: configuration)
        #expect(controller.observe(position: 120, window: window, isPlaying: true).decision == .seek(to: 154))
        configuration.chaseLiveEdgeHLSSegmentDuration = 0
        var plain = LiveEdgeController(configuration: configuration)
        #expect(plain.observe(position: 120, window: window, isPlaying: true).decision == .seek(to: 155))
        #expect(plain.observe(position: 152, window: window, isPlaying: true).decision == .none)
    }

    @Test("a user who seeks back into the DVR window is not dragged to the edge")
    func userWins() {
        var configuration = LiveConfiguration()
        configuration.chaseLiveEdge = .skipFrames
        var controller = LiveEdgeController(configuration: configuration)
        #expect(controller.userSought(to: 110, window: window) == .none)
        #expect(controller.suspendedByUser)
        #expect(controller.observe(position: 111, window: window, isPlaying: true).decision == .none)
        #expect(controller.observe(position: 130, window: window, isPlaying: true).decision == .none)
        // Back at live (within the cutoff): catching up is armed again.
        #expect(controller.observe(position: 157, window: window, isPlaying: true).decision == .none)
        #expect(!controller.suspendedByUser)
        #expect(controller.observe(position: 140, window: 100...160, isPlaying: true).decision == .seek(to: 155))
    }

    @Test("a user seek during a speed-up resets the rate; pausing stops catching up")
    func speedupInterrupted() {
        var configuration = LiveConfiguration()
        configuration.chaseLiveEdge = .speedupPlayback
        var controller = LiveEdgeController(configuration: configuration)
        #expect(controller.observe(position: 140, window: window, isPlaying: true).decision == .setRate(1.1))
        #expect(controller.userSought(to: 120, window: window) == .setRate(1))
        #expect(controller.observe(position: 121, window: window, isPlaying: true).decision == .none)
        var other = LiveEdgeController(configuration: configuration)
        _ = other.observe(position: 140, window: window, isPlaying: true)
        #expect(other.observe(position: 140, window: window, isPlaying: false).decision == .setRate(1))
    }

    @Test("start position: liveEdgeDelay behind the edge, never closer than three target durations")
    func start() {
        var configuration = LiveConfiguration()
        let controller = LiveEdgeController(configuration: configuration)
        #expect(controller.startPosition(window: window, targetDuration: 6) == 142)
        configuration.liveEdgeDelay = 30
        #expect(
            LiveEdgeController(configuration: configuration).startPosition(window: window, targetDuration: 6) == 130)
        configuration.liveEdgeDelay = 500
        #expect(LiveEdgeController(configuration: configuration).startPosition(window: window) == 100)
    }
}

@Suite("Network configuration")
struct NetworkConfigurationTests {
    @Test("the player's settings win over the SDK's, field by field; headers merge")
    func merge() {
        let sdk = NetworkConfiguration(
            httpAdditionalHeaders: ["A": "1", "B": "2"], allowsCellularAccess: true,
            timeoutIntervalForResourceMs: 30_000)
        let player = NetworkConfiguration(httpAdditionalHeaders: ["B": "3", "C": "4"], allowsCellularAccess: false)
        let merged = NetworkConfiguration.merged(sdk: sdk, player: player)
        #expect(merged.httpAdditionalHeaders == ["A": "1", "B": "3", "C": "4"])
        #expect(merged.allowsCellularAccess == false)
        #expect(merged.timeoutIntervalForResourceMs == 30_000)
        #expect(NetworkConfiguration.merged(sdk: nil, player: player) == player)
        #expect(NetworkConfiguration.merged(sdk: sdk, player: nil) == sdk)
    }

    @Test("applied to a URLSession configuration")
    func apply() {
        let session = URLSessionConfiguration.ephemeral
        NetworkConfiguration(
            httpAdditionalHeaders: ["X-Token": "t"], allowsCellularAccess: false, timeoutIntervalForResourceMs: 12_500
        ).apply(to: session)
        #expect(session.httpAdditionalHeaders?["X-Token"] as? String == "t")
        #expect(session.allowsCellularAccess == false)
        #expect(session.timeoutIntervalForResource == 12.5)
    }
}

@Suite("Adaptive bitrate")
struct AdaptiveBitrateTests {
    @Test("the estimate weighs samples by time: one slow download outweighs many instant ones")
    func estimator() {
        var estimator = BandwidthEstimator()
        #expect(estimator.bitsPerSecond == nil)
        estimator.add(bytes: 1000, seconds: 0.001)
        #expect(estimator.bitsPerSecond == nil, "tiny downloads are not sampled")
        for _ in 0..<5 { estimator.add(bytes: 250_000, seconds: 0.01) }  // 200 Mbit/s
        let fast = estimator.bitsPerSecond ?? 0
        #expect(fast > 150_000_000 && fast < 250_000_000, "\(fast)")
        estimator.add(bytes: 300_000, seconds: 3)  // 800 kbit/s
        let slow = estimator.bitsPerSecond ?? 0
        #expect(slow < 1_200_000, "\(slow)")
        #expect(slow > 700_000, "\(slow)")
    }

    /// Asks for the next rendition and lets its segment arrive (what the engine does when the fetch succeeds).
    private static func fetch(_ selector: inout RenditionSelector, estimate: Double?) -> Int {
        let choice = selector.next(estimate: estimate)
        selector.arrived(from: choice)
        return choice
    }

    @Test("selector: up with headroom and spacing, down at once, steady in between")
    func selector() {
        var selector = RenditionSelector(bitrates: [200_000, 500_000, 1_200_000])
        #expect(Self.fetch(&selector, estimate: nil) == 0)
        #expect(Self.fetch(&selector, estimate: 10_000_000) == 2, "plenty of bandwidth: straight to the top")
        #expect(Self.fetch(&selector, estimate: 1_000_000) == 1, "the top needs more than 90% of 1 Mbit/s: down")
        #expect(Self.fetch(&selector, estimate: 1_500_000) == 1, "1.2 Mbit/s is over 70% of 1.5: stay")
        #expect(Self.fetch(&selector, estimate: 640_000) == 1, "500 kbit/s is within 90% of 640: stay")
        #expect(Self.fetch(&selector, estimate: 300_000) == 0)
        #expect(Self.fetch(&selector, estimate: 100_000) == 0, "nothing fits: the lowest")
        var spaced = RenditionSelector(bitrates: [200_000, 500_000, 1_200_000])
        #expect(Self.fetch(&spaced, estimate: 400_000) == 0)
        #expect(Self.fetch(&spaced, estimate: 150_000) == 0)
        #expect(Self.fetch(&spaced, estimate: 800_000) == 1)
        #expect(Self.fetch(&spaced, estimate: 5_000_000) == 1, "no up-switch right after a switch")
        #expect(Self.fetch(&spaced, estimate: 5_000_000) == 2)
    }

    @Test("selector: a switch is committed when its first segment arrives, and a failed one keeps the old rendition")
    func switchCommittedOnArrival() {
        var selector = RenditionSelector(bitrates: [200_000, 500_000, 1_200_000])
        selector.arrived(from: 0)
        #expect(selector.next(estimate: 10_000_000) == 2)
        #expect(selector.current == 0 && selector.pending == 2, "chosen, not committed")
        // Asked again before the segment came: the same pending choice, still not committed.
        #expect(selector.next(estimate: 10_000_000) == 2)
        #expect(selector.current == 0)
        // The down decision is measured against the committed rendition, not the pending one.
        #expect(selector.next(estimate: 300_000) == 0)
        #expect(selector.pending == nil && selector.current == 0)
        #expect(selector.next(estimate: 10_000_000) == 2)
        selector.arrived(from: 2)
        #expect(selector.current == 2 && selector.pending == nil, "its first segment commits it")
        // A switch that fails leaves the committed rendition, and the next up-switch waits the spacing.
        var failing = RenditionSelector(bitrates: [200_000, 500_000, 1_200_000])
        failing.arrived(from: 0)
        #expect(failing.next(estimate: 10_000_000) == 2)
        failing.switchFailed()
        #expect(failing.current == 0 && failing.pending == nil)
        #expect(failing.next(estimate: 10_000_000) == 0, "no retry at once")
        failing.arrived(from: 0)
        failing.arrived(from: 0)
        #expect(failing.next(estimate: 10_000_000) == 2, "after the spacing it tries again")
    }
}
