import FilmstripLoading
import FilmstripSync
import FilmstripTesting
import Foundation
import Testing

@Suite("The retry loop: attempts, pauses and endings on an injected clock")
struct RetryLoopTests {
    private struct Failure: Error, Equatable {
        var attempt: Int
        var permanent = false
        var connectivity = false
    }

    /// Attempts made and pauses taken (seconds on the test clock).
    private final class Log: Sendable {
        let attempts = Mutex<[Int]>([])
        let pauses = Mutex<[Double]>([])
    }

    private static func failed(_ error: any Error) -> RetrySchedule.Failure? {
        guard let failure = error as? Failure, !failure.permanent else { return nil }
        return failure.connectivity ? .connectivity : .other
    }

    /// Runs the loop with pauses on `clock`, advancing it for each pause (with no real waiting).
    private static func run(
        _ policy: RetryPolicy, clock: TestClock, log: Log, go: @escaping @Sendable () -> Bool = { true },
        _ outcome: @escaping @Sendable (Int) throws -> Int
    ) async -> Result<Int, any Error> {
        let result = Mutex<Result<Int, any Error>?>(nil)
        Task {
            let ended: Result<Int, any Error>
            do {
                ended = .success(
                    try await RetryLoop<Int>.run(
                        policy: policy, failed: failed,
                        pause: { pause in
                            log.pauses.withLock { $0.append(pause.seconds) }
                            try? await clock.sleep(for: pause)
                            return go()
                        }
                    ) { number in
                        log.attempts.withLock { $0.append(number) }
                        return try outcome(number)
                    })
            } catch {
                ended = .failure(error)
            }
            result.withLock { $0 = ended }
        }
        // Each pause is one sleeper on the clock: move the clock past it (no real waiting).
        while true {
            _ = await eventually { result.withLock({ $0 }) != nil || clock.sleeperCount > 0 }
            if let ended = result.withLock({ $0 }) { return ended }
            if clock.sleeperCount > 0, let pause = log.pauses.withLock({ $0.last }) {
                await clock.advance(by: .milliseconds(Int((pause * 1000).rounded())))
            }
        }
    }

    @Test("failures are tried again after the policy's pauses until one succeeds")
    func retriesUntilSuccess() async throws {
        let clock = TestClock()
        let log = Log()
        let policy = RetryPolicy(maximumAttempts: 4, baseDelay: 0.25, maximumDelay: 4, jitter: 0)
        let result = await Self.run(policy, clock: clock, log: log) { number in
            if number < 3 { throw Failure(attempt: number) }
            return number * 10
        }
        #expect(try result.get() == 30)
        #expect(log.attempts.withLock { $0 } == [1, 2, 3])
        #expect(log.pauses.withLock { $0 } == [0.25, 0.5])
        #expect(clock.now.offset == .milliseconds(750))
    }

    @Test("after maximumAttempts the last failure is the result")
    func givesUp() async {
        let log = Log()
        let result = await Self.run(
            RetryPolicy(maximumAttempts: 3, baseDelay: 1, jitter: 0), clock: TestClock(), log: log
        ) { number in throw Failure(attempt: number) }
        #expect(throws: Failure(attempt: 3)) { try result.get() }
        #expect(log.attempts.withLock { $0 } == [1, 2, 3])
        #expect(log.pauses.withLock { $0 } == [1, 2])
    }

    @Test("a failure the caller calls permanent ends the loop at once, with no pause")
    func permanent() async {
        let log = Log()
        let result = await Self.run(RetryPolicy(maximumAttempts: 5), clock: TestClock(), log: log) { number in
            throw Failure(attempt: number, permanent: true)
        }
        #expect(throws: Failure(attempt: 1, permanent: true)) { try result.get() }
        #expect(log.attempts.withLock { $0 } == [1])
        #expect(log.pauses.withLock { $0 }.isEmpty)
    }

    @Test("a pause that reports the request abandoned ends the loop with the last failure")
    func abandoned() async {
        let log = Log()
        let result = await Self.run(
            RetryPolicy(maximumAttempts: 5, baseDelay: 0.5, jitter: 0), clock: TestClock(), log: log, go: { false }
        ) { number in throw Failure(attempt: number) }
        #expect(throws: Failure(attempt: 1)) { try result.get() }
        #expect(log.attempts.withLock { $0 } == [1])
        #expect(log.pauses.withLock { $0 } == [0.5])
    }

    @Test("an unreachable server is waited for past maximumAttempts, within the connectivity budget")
    func connectivity() async {
        let log = Log()
        let policy = RetryPolicy(
            maximumAttempts: 2, baseDelay: 0.5, maximumDelay: 8, jitter: 0, waitsForConnectivity: true,
            connectivityBudget: 5)
        let result = await Self.run(policy, clock: TestClock(), log: log) { number in
            throw Failure(attempt: number, connectivity: true)
        }
        // 0.5, 1, 2, then two-second steps, the last cut to what is left of the 5 s budget.
        #expect(log.pauses.withLock { $0 } == [0.5, 1, 2, 1.5])
        #expect(throws: Failure(attempt: 5, connectivity: true)) { try result.get() }
    }

    @Test("cancelling during a pause ends the loop at once with the cancellation; no attempt follows")
    func cancelDuringPause() async throws {
        let clock = TestClock()
        let attempts = Mutex(0)
        let ended = Mutex<Result<Int, any Error>?>(nil)
        let loop = RetryLoop<Int>(
            policy: RetryPolicy(maximumAttempts: 3, baseDelay: 10, jitter: 0), failed: Self.failed,
            pause: { pause, resume in
                let task = Task {
                    try? await clock.sleep(for: pause)
                    resume(true)
                }
                return TaskHandle(task)
            },
            start: { number, done in
                attempts.withLock { $0 += 1 }
                done(.failure(Failure(attempt: number)))
                return nil
            }, completion: { result in ended.withLock { $0 = result } })
        loop.begin()
        #expect(await clock.waitForSleepers(1))
        loop.cancel()
        #expect(throws: CancellationError.self) { try ended.withLock { $0 }?.get() }
        await clock.advance(by: .seconds(10))
        #expect(attempts.withLock { $0 } == 1)
    }

    @Test("cancelling the calling task cancels the attempt under way")
    func cancelAttempt() async {
        let started = Mutex(false)
        let task = Task {
            try await RetryLoop<Int>.run(
                policy: RetryPolicy(maximumAttempts: 3), failed: Self.failed, pause: { _ in true }
            ) {
                _ in
                started.withLock { $0 = true }
                // An attempt that never ends on its own: a sleep on a clock nobody moves.
                try await TestClock().sleep(for: .seconds(600))
                return 1
            }
        }
        while !started.withLock({ $0 }) { await Task.yield() }
        task.cancel()
        // The sleep throws CancellationError, which the caller's `failed` does not retry.
        await #expect(throws: CancellationError.self) { try await task.value }
    }
}

/// A task as a ``LoadHandle``.
private struct TaskHandle: LoadHandle {
    let task: Task<Void, Never>
    init(_ task: Task<Void, Never>) { self.task = task }
    func cancel() { task.cancel() }
}
