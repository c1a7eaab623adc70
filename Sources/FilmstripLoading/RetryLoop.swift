import FilmstripSync
import Foundation

/// The package's retry loop: runs an operation and, after each failure, asks a ``RetrySchedule`` whether and when
/// to run it again. Everything that retries runs on it: the loaders'
/// ``DataLoading/startLoad(_:configuration:exact:prepare:completion:)`` (waiting on dispatch timers) and a player's
/// requests (waiting on its own clock, abandoned by a seek); they differ only in the closures they hand in.
///
/// It is driven by callbacks, so a caller that blocks its own thread on the completion (FFmpeg's I/O, a player's
/// thread) never needs a free thread in Swift's cooperative pool. ``run(policy:failed:pause:_:)`` is the async form.
///
/// ```swift
/// let bytes = try await RetryLoop<Data>.run(
///     policy: RetryPolicy(maximumAttempts: 4, jitter: 0),
///     failed: { ($0 as? LoadingError)?.isTransient == true ? .other : nil },
///     pause: { try? await clock.sleep(for: $0); return true }
/// ) { attempt in try await fetch(attempt) }
/// ```
public final class RetryLoop<Value: Sendable>: LoadHandle, Sendable {
    /// Starts attempt `number` (from 1), which calls `done` once with its result; returns a handle that cancels it.
    public typealias Start =
        @Sendable (_ number: Int, _ done: @escaping @Sendable (Result<Value, any Error>) -> Void) -> (any LoadHandle)?
    /// Called after each failed attempt: how the failure counts against the policy, or `nil` to end with it at once
    /// (trying again cannot help, or the request was abandoned).
    public typealias Failed = @Sendable (_ error: any Error) -> RetrySchedule.Failure?
    /// Waits `pause`, then calls `resume(true)`; or `resume(false)` when the request was abandoned meanwhile (it then
    /// ends with the last failure). Returns a handle that cancels the wait.
    public typealias Pause =
        @Sendable (_ pause: Duration, _ resume: @escaping @Sendable (Bool) -> Void) -> (any LoadHandle)?

    /// Where the loop is: before its first attempt, in an attempt, in the pause between two, or done (its
    /// completion called).
    private enum Phase {
        case notStarted, attempting, pausing, finished
    }

    private struct State {
        var schedule: RetrySchedule
        /// Counts attempts and pauses: a handle is kept only while what it belongs to is the current step.
        var step = 0
        var current: (any LoadHandle)?
        var phase = Phase.notStarted
        /// ``cancel()`` was called: an attempt under way ends the loop when it completes, a pause at once.
        var cancelled = false
    }

    private let start: Start
    private let failed: Failed
    private let pause: Pause
    private let cancellation: @Sendable () -> any Error
    private let completion: @Sendable (Result<Value, any Error>) -> Void
    private let state: Mutex<State>

    /// A loop for one request; ``begin()`` makes its first attempt. `completion` is called once, with the last
    /// attempt's result (or `cancellation()` after ``cancel()``).
    public init(
        policy: RetryPolicy, failed: @escaping Failed, pause: @escaping Pause = RetryLoop.dispatchPause,
        cancellation: @escaping @Sendable () -> any Error = { CancellationError() },
        start: @escaping Start, completion: @escaping @Sendable (Result<Value, any Error>) -> Void
    ) {
        self.start = start
        self.failed = failed
        self.pause = pause
        self.cancellation = cancellation
        self.completion = completion
        state = Mutex(State(schedule: RetrySchedule(policy)))
    }

    /// Makes the first attempt (once).
    public func begin() {
        let first = state.withLock { state -> Bool in
            guard state.phase == .notStarted else { return false }
            state.phase = .attempting
            return true
        }
        if first { attempt(1) }
    }

    /// Waits on a dispatch timer (never abandoned).
    public static var dispatchPause: Pause {
        { pause, resume in
            DispatchQueue.global().asyncAfter(deadline: .now() + pause.seconds) { resume(true) }
            return nil
        }
    }

    private func attempt(_ number: Int) {
        let step = state.withLock { state -> Int? in
            guard state.phase != .finished, !state.cancelled else { return nil }
            state.phase = .attempting
            state.current = nil
            state.step += 1
            return state.step
        }
        guard let step else { return finish(.failure(cancellation())) }
        let handle = start(number) { [self] result in completed(number, result) }
        keep(handle, step: step)
    }

    private func completed(_ number: Int, _ result: Result<Value, any Error>) {
        guard case .failure(let error) = result, let failure = failed(error) else { return finish(result) }
        let next = state.withLock { state -> (RetrySchedule.Decision, Int)? in
            guard state.phase != .finished, !state.cancelled else { return nil }
            let decision = state.schedule.failed(failure)
            guard case .retry = decision else { return (decision, state.step) }
            state.current = nil
            state.phase = .pausing
            state.step += 1
            return (decision, state.step)
        }
        switch next {
        case nil: finish(.failure(cancellation()))
        case (.giveUp, _)?: finish(result)
        case (.retry(let after), let step)?:
            let handle = pause(after) { [self] resume in resume ? attempt(number + 1) : finish(result) }
            keep(handle, step: step)
        }
    }

    /// Keeps `handle` while `step` is the current one; cancels it if the loop was cancelled meanwhile.
    private func keep(_ handle: (any LoadHandle)?, step: Int) {
        let cancelled = state.withLock { state -> Bool in
            if state.step == step, state.phase != .finished { state.current = handle }
            return state.cancelled
        }
        if cancelled { handle?.cancel() }
    }

    private func finish(_ result: Result<Value, any Error>) {
        let first = state.withLock { state -> Bool in
            defer { state.phase = .finished }
            state.current = nil
            return state.phase != .finished
        }
        if first { completion(result) }
    }

    /// Cancels the attempt under way (its completion ends the loop) or the pause (the loop ends at once).
    public func cancel() {
        let (current, pausing) = state.withLock { state in
            state.cancelled = true
            return (state.current, state.phase == .pausing)
        }
        current?.cancel()
        if pausing { finish(.failure(cancellation())) }
    }
}

extension RetryLoop {
    /// Runs `operation` (given the attempt's number, from 1) until it succeeds or the loop gives up, as
    /// ``init(policy:failed:pause:cancellation:start:completion:)`` describes; `pause` waits and says whether to go on.
    /// Each attempt and pause runs as its own task; cancelling the calling task cancels the one under way.
    public static func run(
        policy: RetryPolicy, failed: @escaping Failed, pause: @escaping @Sendable (Duration) async -> Bool,
        _ operation: @escaping @Sendable (_ number: Int) async throws -> Value
    ) async throws -> Value {
        try await awaitingCompletion { completion in
            let loop = RetryLoop(
                policy: policy, failed: failed,
                pause: { duration, resume in TaskLoadHandle(task: Task { resume(await pause(duration)) }) },
                start: { number, done in
                    TaskLoadHandle(
                        task: Task {
                            do { done(.success(try await operation(number))) } catch { done(.failure(error)) }
                        })
                }, completion: completion)
            loop.begin()
            return loop
        }
    }
}
