import Foundation

/// The player's clock, reduced to what its threads and tasks need: the time since the clock was handed over,
/// sleeping on it (a task) or blocking on it (a thread), and the wall clock that goes with it (a live stream's dates).
///
/// Players use `ContinuousClock` and the system's date. On any other clock (a test clock) the player also keeps an
/// ``Activity`` ledger, so the clock's owner can move it on whenever every thread and task of the player waits.
struct SessionClock: Sendable {
    /// Time since the clock was handed over.
    let now: @Sendable () -> Duration
    /// Sleeps until a time since the handover, not parked (a waiter that parks for itself; throws when cancelled).
    let sleepUntil: @Sendable (Duration) async throws -> Void
    /// The date now.
    let date: @Sendable () -> Date
    /// Who works and who waits (on a clock other than the system's).
    let activity: Activity?

    init<C: Clock>(_ clock: C, date: @escaping @Sendable () -> Date = { Date() }) where C.Duration == Duration {
        let start = clock.now
        now = { start.duration(to: clock.now) }
        sleepUntil = { try await clock.sleep(until: start.advanced(by: $0), tolerance: nil) }
        self.date = date
        activity = clock is ContinuousClock || clock is SuspendingClock ? nil : Activity()
    }

    /// Blocks the calling thread until `deadline` on the clock or until `semaphore` is signalled. A worker of the
    /// activity ledger must be parked already (until `deadline`), in the same critical section that decided to wait,
    /// so that whoever signals the semaphore after that decision finds it parked and wakes it; it is busy again on
    /// return.
    func block(until deadline: Duration, on semaphore: DispatchSemaphore) {
        let seconds = (deadline - now()).seconds
        guard let activity else {
            if seconds > 0 { _ = semaphore.wait(timeout: .now() + seconds) }
            return
        }
        defer { if let id = Activity.worker { activity.wake(id) } }
        guard seconds > 0 else { return }
        let timer = Task { [sleepUntil] in
            guard (try? await sleepUntil(deadline)) != nil else { return }
            semaphore.signal()
        }
        semaphore.wait()
        timer.cancel()
    }

    /// Blocks the calling thread for `seconds` on the clock (a thread's pause between looks at what it waits for).
    func pause(_ seconds: Double) {
        guard let activity else { return Thread.sleep(forTimeInterval: seconds) }
        let deadline = now() + .seconds(seconds)
        if let id = Activity.worker { activity.park(id, until: deadline) }
        block(until: deadline, on: DispatchSemaphore(value: 0))
    }
}
