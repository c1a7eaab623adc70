import FilmstripSync

/// Wakes one waiting task early: the fetch task waits for a deadline on the session's clock or for this signal (a
/// seek, a stop, the playhead moving), whichever comes first. A signal given while nobody waits is kept for the next
/// wait; spurious wake-ups are harmless, the waiter looks at its state again.
final class WakeSignal: Sendable {
    private struct State {
        var signalled = false
        var waiter: CheckedContinuation<Void, Never>?
        /// The worker waiting (on a clock with an activity ledger), woken first by a signal.
        var parked: (activity: Activity, id: Int)?
    }

    private let state = Mutex(State())

    /// Wakes the waiter, or the next one.
    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let parked = state.parked { parked.activity.wake(parked.id) }
            guard let waiter = state.waiter else {
                state.signalled = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// The longest a worker that waits only for a signal waits: a net under a signal that never comes (every such
    /// wait has an event that ends it sooner; the net bounds what a missed one costs).
    static let safetyNet: Duration = .seconds(60)

    /// Waits until signalled (or cancelled), or ``safetyNet`` on `clock` at most.
    func waitForSignal(on clock: SessionClock) async {
        await wait(for: Self.safetyNet, on: clock)
    }

    /// Waits for `duration` on `clock` or until signalled (or cancelled).
    func wait(for duration: Duration, on clock: SessionClock) async {
        let deadline = clock.now() + duration
        let worker = clock.activity.flatMap { activity in Activity.worker.map { (activity, $0) } }
        if let worker {
            // Parked under the signal's lock unless a signal is already kept (the wait then ends at once): a signal
            // after this finds the worker parked and wakes it.
            state.withLock { state in
                state.parked = worker
                if !state.signalled { worker.0.park(worker.1, until: deadline) }
            }
        }
        defer {
            if let worker {
                state.withLock { $0.parked = nil }
                worker.0.wake(worker.1)
            }
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await clock.sleepUntil(deadline) }
            group.addTask { await self.wait() }
            await group.next()
            group.cancelAll()
        }
    }

    private func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.signalled {
                        state.signalled = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            // Cancellation counts as a signal: a waiter stored after this still wakes at once.
            signal()
        }
    }
}
