import Filmstrip
import FilmstripTesting
import Foundation
import Testing

@testable import FilmstripPlayer

/// A player on a test clock that moves only while every thread and task of the player waits (its activity ledger
/// says so), straight to the earliest deadline any of them waits for. Decoding and loopback requests take the real
/// time they take, and the clock stands still meanwhile: what the player does at each point of its clock is the same
/// on an idle machine and on one with every core busy.
final class VirtualPlayer: Sendable {
    let clock: TestClock
    let player: Player
    /// The wall clock that goes with the test clock (live streams' dates).
    let date: @Sendable () -> Date

    /// A player on `clock` (a new one by default; players that share a live stream's clock share one), whose wall
    /// clock is `date` (by default: now, moving with the clock).
    init(
        network: NetworkConfiguration? = nil, clock: TestClock = TestClock(), date: (@Sendable () -> Date)? = nil,
        ratePolicy: PlaybackRatePolicy = PlaybackRatePolicy(engine: .filmstrip)
    ) {
        self.clock = clock
        self.date = date ?? clock.wallClock(from: Self.origin)
        player = Player(ratePolicy: ratePolicy, network: network, clock: clock, date: self.date)
    }

    /// Drives `player`, made on `clock` by other code (an SDK whose players run on it).
    init(_ player: Player, clock: TestClock, date: @escaping @Sendable () -> Date) {
        self.clock = clock
        self.date = date
        self.player = player
    }

    /// Where the wall clock of a test clock starts: a whole second, so that the dates of a live stream's segment
    /// boundaries (whole seconds on the clock) are exact, never a rounding of the real time's fraction either way.
    static let origin = Date(timeIntervalSince1970: 1_800_000_000)

    /// Seconds on the clock (since it was made).
    var now: Double { clock.now.offset.seconds }

    /// Runs the clock on until `condition` holds (`true`), or until `limit` of clock time has passed or the player
    /// waits with no deadline for longer than a few seconds of real time (`false`).
    @discardableResult
    func run(within limit: Duration = .seconds(600), until condition: () -> Bool) async -> Bool {
        await run(to: player.clock.now() + limit, until: condition)
    }

    /// Runs the clock on for `duration` (or until `condition` holds).
    func run(for duration: Duration, until condition: () -> Bool = { false }) async {
        await run(to: player.clock.now() + duration, until: condition)
    }

    /// Runs the clock on to `end` (the player's time: since it was made) or until `condition` holds.
    @discardableResult
    private func run(to end: Duration, until condition: () -> Bool) async -> Bool {
        guard let activity = player.clock.activity else { return false }
        var stuck = 0
        var busy = 0
        while !condition() {
            let now = player.clock.now()
            if now >= end {
                // What the last step woke runs before the caller looks (the clock stays at `end`).
                await settle(activity)
                return condition()
            }
            let (quiet, next) = activity.quiet(at: now)
            if quiet {
                let target = min(next ?? end, end)
                // Nobody waits for a deadline: only a callback still on its way (an error report) may change things.
                if next == nil {
                    stuck += 1
                    if stuck > 3000 { return false }
                    await Self.letOthersWork()
                    continue
                }
                stuck = 0
                await clock.advance(by: target - now)
            } else {
                // Somebody works: real time passes, the clock stands still.
                busy += 1
                // About five minutes of real time with somebody always working: a worker never parks.
                if busy > 300_000 {
                    Issue.record("the player never waits at \(now): \(activity.summary)")
                    return false
                }
                await Self.letOthersWork()
            }
        }
        return true
    }

    /// The driver's one real pause: the player's threads (engine, decoders, loopback requests) do real work while
    /// its clock stands still, and the driver can only look again a moment later; what it waits for is a state of
    /// the ledger, never an amount of time.
    private static func letOthersWork() async {
        try? await Task.sleep(for: .milliseconds(1))
    }

    /// Waits (in real time) until every worker of the player waits again.
    private func settle(_ activity: Activity) async {
        for _ in 0..<300_000 where !activity.quiet(at: player.clock.now()).quiet {
            await Self.letOthersWork()
        }
    }
}

extension PlayerRecorder {
    /// Runs `virtual`'s clock until `state` has been entered; records an issue if it is not.
    func wait(for state: PlayerState.Kind, on virtual: VirtualPlayer) async {
        if await !virtual.run(until: { states.contains(state) }) {
            Issue.record("the clock ran out waiting for \(state) at \(virtual.now) s; states: \(states)")
        }
    }
}

/// A headless player on a test clock whose states and errors are recorded.
func observedVirtualPlayer(network: NetworkConfiguration? = nil) -> (VirtualPlayer, Player, PlayerRecorder) {
    let virtual = VirtualPlayer(network: network)
    let recorder = PlayerRecorder()
    recorder.observe(virtual.player, frames: false)
    return (virtual, virtual.player, recorder)
}

extension Filmstrip {
    /// A player of this SDK (its settings) on a new test clock.
    func virtualPlayer() -> VirtualPlayer {
        let clock = TestClock()
        let date = clock.wallClock(from: VirtualPlayer.origin)
        setPlayerClock(clock, date: date)
        defer { setPlayerClock(nil) }
        return VirtualPlayer(player(), clock: clock, date: date)
    }
}
