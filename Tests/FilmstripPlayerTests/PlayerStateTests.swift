import Testing

@testable import FilmstripPlayer

@Suite("Player states")
struct PlayerStateTests {
    typealias K = PlayerState.Kind

    /// The graph of SPEC 4.1 written out edge by edge, independently of the implementation's table.
    static let allowed: Set<String> = [
        "idle>opening",
        "opening>ready", "opening>stopping", "opening>error",
        "ready>buffering", "ready>play", "ready>pausing", "ready>paused", "ready>seeking", "ready>stopping",
        "ready>error",
        "buffering>play", "buffering>playing", "buffering>pausing", "buffering>paused", "buffering>seeking",
        "buffering>ended", "buffering>stopping", "buffering>error",
        "play>playing", "play>pausing", "play>buffering", "play>seeking", "play>ended", "play>stopping", "play>error",
        "playing>pausing", "playing>buffering", "playing>seeking", "playing>ended", "playing>stopping", "playing>error",
        "pausing>paused", "pausing>play", "pausing>buffering", "pausing>seeking", "pausing>stopping", "pausing>error",
        "paused>play", "paused>seeking", "paused>buffering", "paused>stopping", "paused>error",
        "seeking>play", "seeking>pausing", "seeking>buffering", "seeking>ended", "seeking>stopping", "seeking>error",
        "ended>seeking", "ended>opening", "ended>stopping", "ended>error",
        "stopping>idle", "stopping>error",
        "error>stopping",
    ]

    static func state(_ kind: K) -> PlayerState {
        switch kind {
        case .idle: .idle
        case .opening: .opening
        case .ready: .ready
        case .buffering: .buffering
        case .play: .play
        case .playing: .playing
        case .pausing: .pausing
        case .paused: .paused
        case .seeking: .seeking
        case .ended: .ended
        case .stopping: .stopping
        case .error: .error(PlayerError(.sourceUnavailable, severity: .fatal, "test"))
        }
    }

    @Test(
        "every pair of states: allowed transitions happen, all others are refused with a warning", arguments: K.allCases
    )
    func allPairs(from: K) {
        for to in K.allCases {
            var machine = PlayerStateMachine(state: Self.state(from))
            let outcome = machine.move(to: Self.state(to))
            if Self.allowed.contains("\(from.rawValue)>\(to.rawValue)") {
                #expect(outcome == .moved(previous: Self.state(from), current: Self.state(to)), "\(from) -> \(to)")
                #expect(machine.state.kind == to)
            } else {
                guard case .refused(let warning) = outcome else {
                    Issue.record("\(from) -> \(to) should be refused")
                    continue
                }
                #expect(warning.severity == .warning && warning.type == .invalidStateTransition)
                #expect(warning.message.contains("\(from.rawValue) -> \(to.rawValue)"))
                #expect(machine.state.kind == from, "a refused transition must not be performed")
            }
        }
    }

    @Test("the graph's shape: error only leaves by release, idle only by opening, no self-loops")
    func shape() {
        #expect(K.error.successors == [.stopping])
        #expect(K.idle.successors == [.opening])
        #expect(K.allCases.allSatisfy { !$0.canMove(to: $0) })
        #expect(K.allCases.filter { $0 != .idle && $0 != .error }.allSatisfy { $0.canMove(to: .error) })
        #expect(K.play.canMove(to: .pausing))  // a refused autoplay
        #expect(!K.paused.canMove(to: .playing))  // resuming goes through play
        #expect(!K.seeking.canMove(to: .paused))  // back to paused goes through pausing
        #expect(K.ended.canMove(to: .opening) && K.ended.canMove(to: .seeking))
        #expect(Self.allowed.count == K.allCases.reduce(0) { $0 + $1.successors.count })
    }

    @Test("a whole life: open, play, seek, buffer, pause, end, reopen, release")
    func journey() {
        var machine = PlayerStateMachine()
        let path: [PlayerState] = [
            .opening, .ready, .play, .playing, .seeking, .buffering, .play, .playing, .pausing, .paused, .seeking,
            .pausing, .paused, .play, .playing, .ended, .seeking, .play, .playing, .ended, .opening, .ready, .stopping,
            .idle,
        ]
        var previous = PlayerState.idle
        for next in path {
            #expect(machine.move(to: next) == .moved(previous: previous, current: next))
            previous = next
        }
        let failure = PlayerError(.sourceUnavailable, severity: .fatal, "404")
        #expect(machine.move(to: .opening) == .moved(previous: .idle, current: .opening))
        #expect(machine.move(to: .error(failure)) == .moved(previous: .opening, current: .error(failure)))
        #expect(machine.state.playerError == failure)
        guard case .refused = machine.move(to: .opening) else {
            Issue.record("error must not go back to opening")
            return
        }
        #expect(machine.move(to: .stopping) == .moved(previous: .error(failure), current: .stopping))
        #expect(machine.state.playerError == nil)
    }
}
