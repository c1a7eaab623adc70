import Foundation

/// How the engine thread waits: on the player's clock, until a deadline, a command, or a change to the buffers.
extension Player {
    /// Sleeps `seconds` of the player's clock, or until the next command. A command sent after the check signals
    /// the semaphore, so the wait ends at once; extra signals only cost a spurious step. On a clock with an activity
    /// ledger the engine parks in the same critical section, so a command queued after the check finds it parked
    /// and wakes it. While `stopping`, queued commands wait for the release: they do not cut the wait short.
    func engineSleep(for seconds: Double, stopping: Bool) {
        guard seconds > 0 else { return }
        let until = clock.now() + .seconds(seconds)
        let waits = shared.withLock { shared -> Bool in
            guard (shared.commands.isEmpty || stopping) && !shared.shutdown else { return false }
            if let activity = clock.activity, let id = Activity.worker { activity.park(id, until: until) }
            return true
        }
        if waits { clock.block(until: until, on: wakeUp) }
    }

    /// Sleeps as ``engineSleep(for:stopping:)`` does, and also until a producer changes the buffers
    /// (``bufferChanged()``). A change counted since `mark` (when the engine looked at the buffers) ends it at once.
    func awaitBufferChange(since mark: Int, for seconds: Double, stopping: Bool) {
        let unchanged = bufferEvents.withLock { events -> Bool in
            guard events.count == mark else { return false }
            events.awaited = true
            return true
        }
        guard unchanged else { return }
        engineSleep(for: seconds, stopping: stopping)
        bufferEvents.withLock { $0.awaited = false }
    }
}
