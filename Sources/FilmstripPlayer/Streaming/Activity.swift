import FilmstripSync
import Foundation

/// Who among a player's threads and tasks works and who waits, kept for a player on a clock other than the system's
/// (a test clock): such a clock may be moved on whenever nobody works, to the earliest deadline anybody waits for, and
/// playback on it is then the same however fast or loaded the machine is.
///
/// A worker (the engine thread, a decoder thread, a fetch task) joins busy; it parks before it blocks (with the clock
/// deadline that ends its wait, if one does) and is busy again when it resumes. Whoever wakes a parked worker marks
/// it busy first (``ParkingCondition``, ``WakeSignal``, the player's commands), so there is no moment in which it
/// looks parked and is about to run.
final class Activity: Sendable {
    private struct State {
        var nextID = 0
        var busy: Set<Int> = []
        /// Parked workers and the deadline that ends their wait (`nil`: only a signal does).
        var parked: [Int: Duration?] = [:]
        /// What each worker is (for ``summary``).
        var names: [Int: String] = [:]
    }

    private let state = Mutex(State())

    /// The worker the current thread or task runs as.
    @TaskLocal static var worker: Int?

    /// A new worker, busy; `name` says what it is.
    func join(_ name: String) -> Int {
        state.withLock { state in
            state.nextID += 1
            state.busy.insert(state.nextID)
            state.names[state.nextID] = name
            return state.nextID
        }
    }

    /// The worker ended.
    func leave(_ id: Int) {
        state.withLock { state in
            state.busy.remove(id)
            state.parked[id] = nil
            state.names[id] = nil
        }
    }

    /// The worker waits, until `deadline` on the clock or a signal.
    func park(_ id: Int, until deadline: Duration?) {
        state.withLock { state in
            guard state.busy.remove(id) != nil else { return }
            state.parked[id] = .some(deadline)
        }
    }

    /// The worker runs again (woken by another, or by itself after its wait).
    func wake(_ id: Int) {
        state.withLock { state in
            guard state.parked.removeValue(forKey: id) != nil else { return }
            state.busy.insert(id)
        }
    }

    /// Whether nobody works at `now` (no busy worker, none whose deadline has come), and the earliest deadline a
    /// parked worker waits for.
    func quiet(at now: Duration) -> (quiet: Bool, next: Duration?) {
        state.withLock { state in
            let deadlines = state.parked.values.compactMap { $0 }
            let next = deadlines.min()
            return (state.busy.isEmpty && (next.map { $0 > now } ?? true), next)
        }
    }

    /// The busy workers and the parked ones with their deadlines (for a test that waits too long to say why).
    var summary: String {
        state.withLock { state in
            let names = state.names
            let name = { (id: Int) in "\(id) \(names[id] ?? "?")" }
            let parked = state.parked.sorted { $0.key < $1.key }.map { id, deadline in
                "\(name(id))@\(deadline.map { "\($0)" } ?? "-")"
            }
            return "busy \(state.busy.sorted().map(name)), parked \(parked)"
        }
    }

    /// Runs `body` on a task that is a worker of `activity` (when there is one), named `name`.
    static func task(
        _ activity: Activity?, name: String, _ body: @escaping @Sendable () async -> Void
    ) -> Task<Void, Never> {
        guard let activity else { return Task { await body() } }
        let id = activity.join(name)
        return Task {
            await $worker.withValue(id) { await body() }
            activity.leave(id)
        }
    }

    /// Starts a thread that runs `body` as a worker of `activity` (when there is one). The worker joins before the
    /// thread starts: between the two the ledger would see nobody working and let the clock jump.
    static func thread(
        _ activity: Activity?, name: String, qualityOfService: QualityOfService = .default,
        _ body: @escaping @Sendable () -> Void
    ) {
        let id = activity?.join(name)
        let thread = Thread {
            guard let activity, let id else { return body() }
            $worker.withValue(id) { body() }
            activity.leave(id)
        }
        thread.name = name
        thread.qualityOfService = qualityOfService
        thread.start()
    }
}

/// A condition whose waiters are parked workers of an ``Activity``: a broadcast or a signal marks them busy before
/// it wakes them. Without an activity it is a plain `NSCondition`.
final class ParkingCondition: @unchecked Sendable {
    private let condition = NSCondition()
    private let activity: Activity?
    /// The workers waiting now; guarded by the condition's lock (held by whoever waits or signals).
    private var waiters: [Int] = []

    init(activity: Activity?) {
        self.activity = activity
    }

    func lock() { condition.lock() }
    func unlock() { condition.unlock() }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        try condition.withLock(body)
    }

    /// Waits for a signal (the lock held).
    func wait() {
        guard let activity, let id = Activity.worker else { return condition.wait() }
        waiters.append(id)
        activity.park(id, until: nil)
        condition.wait()
        if let index = waiters.firstIndex(of: id) { waiters.remove(at: index) }
        activity.wake(id)
    }

    /// Waits for a signal or a date on the system's clock (the lock held); only without an activity ledger.
    func wait(until date: Date) -> Bool {
        condition.wait(until: date)
    }

    func broadcast() {
        if let activity { for id in waiters { activity.wake(id) } }
        condition.broadcast()
    }

    func signal() {
        if let activity { for id in waiters { activity.wake(id) } }
        condition.signal()
    }
}
