import FilmstripSync
public import Foundation

/// A clock that moves only when a test says so, for logic that depends on time (refresh cadences, timeouts): code
/// under test sleeps on it, and ``advance(by:)`` wakes every sleeper whose deadline has come, in deadline order.
///
/// ```swift
/// let clock = TestClock()
/// configuration.clock = clock
/// await clock.waitForSleepers(1)          // the code under test is now waiting
/// await clock.advance(by: .seconds(6))     // and wakes, six simulated seconds later
/// ```
public final class TestClock: Clock, Sendable {
    /// A point on the clock: the time since it was made.
    public struct Instant: InstantProtocol, Sendable {
        /// The time since the clock was made.
        public var offset: Duration

        /// Creates an instant.
        public init(offset: Duration) { self.offset = offset }

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (a: Instant, b: Instant) -> Bool { a.offset < b.offset }
    }

    private struct Sleeper {
        var id: Int
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Sleeper] = []
        var nextID = 0
    }

    private let state = Mutex(State())

    /// A wall clock that reads `origin` plus this clock's offset: it moves only when the test advances this clock
    /// (for code that reads dates, such as a live stream's window).
    public func wallClock(from origin: Date = Date()) -> @Sendable () -> Date {
        { [self] in origin.addingTimeInterval(now.offset.seconds) }
    }

    /// Creates a clock at offset zero.
    public init() {}

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .zero }

    /// Suspends until the clock reaches `deadline` (at once if it has), or throws `CancellationError` when the task
    /// is cancelled.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { s -> Int in
            s.nextID += 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Cancelled before it sleeps: the handler below may have run already and found nothing to wake.
                enum Start { case now, cancelled, asleep }
                let start = state.withLock { s -> Start in
                    if Task.isCancelled { return .cancelled }
                    if deadline <= s.now { return .now }
                    s.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return .asleep
                }
                switch start {
                case .now: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .asleep: break
                }
            }
        } onCancel: {
            let cancelled = state.withLock { s -> Sleeper? in
                guard let index = s.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return s.sleepers.remove(at: index)
            }
            cancelled?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward, waking every sleeper whose deadline has come (earliest first), and lets the woken
    /// tasks run before returning.
    public func advance(by duration: Duration) async {
        let target = state.withLock { $0.now.advanced(by: duration) }
        while true {
            let next = state.withLock { s -> Sleeper? in
                guard let index = s.sleepers.indices.min(by: { s.sleepers[$0].deadline < s.sleepers[$1].deadline }),
                    s.sleepers[index].deadline <= target
                else {
                    s.now = target
                    return nil
                }
                let sleeper = s.sleepers.remove(at: index)
                s.now = sleeper.deadline
                return sleeper
            }
            guard let next else { break }
            next.continuation.resume()
            for _ in 0..<10 { await Task.yield() }
        }
        for _ in 0..<10 { await Task.yield() }
    }

    /// Tasks sleeping on the clock now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Waits (yielding, up to about five seconds of real time) until at least `count` tasks sleep on the clock; returns
    /// whether they do.
    @discardableResult
    public func waitForSleepers(_ count: Int = 1) async -> Bool {
        for _ in 0..<5000 {
            if sleeperCount >= count { return true }
            try? await Task.sleep(nanoseconds: 1_000_000)
        }
        return sleeperCount >= count
    }
}
