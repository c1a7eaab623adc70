import FilmstripLoading
import FilmstripStreaming
import FilmstripSync
import Foundation

/// Whose request it is: each lane of a session has its own fetch task, restarts and wake-up signal.
enum FetchLane: Sendable {
    /// The video segments (and muxed audio).
    case video
    /// A separate audio rendition.
    case audio
    /// Trick play's I-frames or segments (see ``SegmentChunks``).
    case trick
}

/// Why a request was given up.
struct AttemptFailure: Error, Sendable {
    var message: String
    var underlying: (any Error & Sendable)?
    /// The server could not be reached.
    var connectivity: Bool
    /// Trying again cannot help (a malformed manifest, a refused URL, a cancelled request).
    var permanent: Bool
    /// The player should describe it as unusable content rather than an unavailable one.
    var invalidContent: Bool
}

extension StreamSession {
    /// Runs `operation` on the package's ``RetryLoop`` with the player's policy (`settings.retry`): its pauses wait
    /// on the session's clock, and a seek or a stop abandons the request (a pause is woken early by the lane's
    /// signal; other wake-ups do not cut it short). An unreachable server is reported once as a connectivity warning.
    /// `once` tries a single time (a live reload, whose schedule is its retry). Each ``FetchLane`` has its own
    /// restarts (which abandon its requests) and its own wake-up signal (one waiter per signal).
    func attempt<T: Sendable>(
        keyURL: URL?, once: Bool = false, lane: FetchLane = .video,
        _ operation: @escaping @Sendable () async throws -> T
    ) async -> Result<T, AttemptFailure> {
        let wake: WakeSignal
        let current: @Sendable () -> Int
        switch lane {
        case .video:
            wake = self.wake
            current = { [self] in shared.withLock { $0.generation } }
        case .audio:
            wake = audioWake
            current = { [self] in audioState.withLock { $0.generation } }
        case .trick:
            wake = trickWake
            current = { [self] in trickGeneration.load(ordering: .relaxed) }
        }
        let generation = current()
        let abandoned: @Sendable () -> Bool = { [self] in
            isStopped || current() != generation || Task.isCancelled
        }
        let keyTimeout = settings.keyTimeout
        do {
            return .success(
                try await RetryLoop<T>.run(
                    policy: once ? .none : settings.retry,
                    failed: { [self] error in
                        let failure = Self.classify(error, keyURL: keyURL, keyTimeout: keyTimeout)
                        if abandoned() || failure.permanent { return nil }
                        if failure.connectivity, let underlying = failure.underlying { lost(underlying) }
                        return failure.connectivity ? .connectivity : .other
                    },
                    pause: { [clock] pause in
                        let until = clock.now() + pause
                        while clock.now() < until {
                            await wake.wait(for: until - clock.now(), on: clock)
                            if abandoned() { return false }
                        }
                        return true
                    }, { _ in try await operation() }))
        } catch {
            return .failure(Self.classify(error, keyURL: keyURL, keyTimeout: keyTimeout))
        }
    }

    /// Runs an opening step with retries (on `lane`); a failure is fatal.
    func withRetries<T: Sendable>(
        lane: FetchLane = .video, _ operation: @escaping @Sendable () async throws -> T
    ) async throws(PlayerError) -> T {
        switch await attempt(keyURL: nil, lane: lane, operation) {
        case .success(let value):
            restored()
            return value
        case .failure(let failure):
            throw PlayerError(
                failure.invalidContent ? .sourceInvalid : .sourceUnavailable, severity: .fatal, failure.message,
                underlying: failure.underlying)
        }
    }

    /// What a thrown error means for retrying.
    static func classify(_ error: any Error, keyURL: URL?, keyTimeout: Double?) -> AttemptFailure {
        if let player = error as? PlayerError {
            return AttemptFailure(
                message: player.message, underlying: player, connectivity: false, permanent: true,
                invalidContent: player.type == .sourceInvalid)
        }
        guard let streaming = error as? StreamingError else {
            let cancelled = error is CancellationError
            return AttemptFailure(
                message: "\(error)", underlying: nil, connectivity: false, permanent: cancelled, invalidContent: false)
        }
        let loading = streaming.underlying as? LoadingError
        // A key that does not come in time is a failed acquisition, not a lost connection: it is retried like a
        // segment, then the missing-segment policy applies.
        if let keyURL, streaming.url == keyURL {
            var message = streaming.description
            if loading?.kind == .timedOut, let keyTimeout {
                message =
                    "the key \(keyURL.absoluteString) did not arrive within timeoutIntervalForDrmAcquisitionMs "
                    + "(\(formatSeconds(keyTimeout)) s)"
            }
            return AttemptFailure(
                message: message, underlying: streaming, connectivity: false, permanent: false, invalidContent: false)
        }
        let connectivity: Bool =
            switch loading?.kind {
            case .transport?, .timedOut?: true
            default: false
            }
        let permanent: Bool
        let invalid: Bool
        switch streaming.kind {
        case .manifest, .unsupported, .tooLarge, .noTrack, .refused:
            permanent = true
            invalid = true
        case .cancelled:
            permanent = true
            invalid = false
        case .network, .unavailable, .invalidContent:
            permanent = false
            invalid = false
        }
        return AttemptFailure(
            message: streaming.description, underlying: streaming, connectivity: connectivity, permanent: permanent,
            invalidContent: invalid)
    }
}

extension StreamSession {
    func lost(_ error: any Error & Sendable) {
        let first = shared.withLock { shared -> Bool in
            defer { shared.connectionLost = true }
            return !shared.connectionLost
        }
        if first {
            report(
                PlayerError(
                    .internetConnectionUnavailable, severity: .warning,
                    "the server cannot be reached (\(error)); retrying",
                    underlying: error))
        }
    }

    func restored() {
        let was = shared.withLock { shared -> Bool in
            defer { shared.connectionLost = false }
            return shared.connectionLost
        }
        if was {
            report(PlayerError(.internetConnectionAvailable, severity: .warning, "the server can be reached again"))
        }
    }
}

/// Runs `operation` on a task and blocks the calling thread (the engine's or the decoder's, never a task's) until it
/// ends. `started` gets the task, so another thread can cancel it, and returns whether to cancel it at once. With an
/// `activity` ledger the task is a worker, and the thread is parked while it waits (the task wakes it as it ends).
func waitForTask<T: Sendable>(
    activity: Activity?, _ operation: @escaping @Sendable () async -> T, started: (Task<Void, Never>) -> Bool
) -> T {
    let result = Mutex<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    let waiter = Activity.worker
    let task = Activity.task(activity) {
        let value = await operation()
        // The result and the wake-up in one critical section with the waiter's decision to park.
        result.withLock { result in
            result = value
            if let activity, let waiter { activity.wake(waiter) }
        }
        done.signal()
    }
    if started(task) { task.cancel() }
    result.withLock { result in
        if result == nil, let activity, let waiter { activity.park(waiter, until: nil) }
    }
    done.wait()
    if let activity, let waiter { activity.wake(waiter) }
    return result.withLock { $0! }
}
