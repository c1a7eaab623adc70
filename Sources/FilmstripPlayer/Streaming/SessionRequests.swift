import FilmstripFormats
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

/// The one place a stream session's requests are made: each on the package's ``RetryLoop`` with the player's
/// policy, pausing on the session's clock and abandoned by its lane's restart or the session's stop; a segment's
/// bytes with its initialisation section; and the connectivity warnings (lost once, then restored once).
final class SessionRequests: Sendable {
    /// A lane as its requests see it: its wake-up signal (one waiter), its restart count, and the session's stop.
    struct Lane: Sendable {
        let wake: WakeSignal
        let generation: @Sendable () -> Int
        let stopped: @Sendable () -> Bool
    }

    let client: StreamingClient
    /// The player's policy (see ``retryPolicy(_:waitsForConnectivity:budget:)``).
    let retry: RetryPolicy
    let keyTimeout: Double?
    let clock: SessionClock
    private let report: @Sendable (PlayerError) -> Void
    private let connectionLost = Mutex(false)

    init(
        client: StreamingClient, retry: RetryPolicy, keyTimeout: Double?, clock: SessionClock,
        report: @escaping @Sendable (PlayerError) -> Void
    ) {
        (self.client, self.retry, self.keyTimeout, self.clock, self.report) = (client, retry, keyTimeout, clock, report)
    }

    /// The player's retry policy: a segment, manifest or key request is tried `segmentRetries` more times, 0.25 s
    /// doubling to 4 s apart with no jitter (the schedule is the player's, on its clock); an unreachable server is
    /// waited for, up to the resource timeout, unless the network configuration says not to.
    static func retryPolicy(
        _ streaming: StreamingConfiguration, waitsForConnectivity: Bool, budget: Double
    ) -> RetryPolicy {
        RetryPolicy(
            maximumAttempts: streaming.segmentRetries + 1, baseDelay: 0.25, maximumDelay: 4, jitter: 0,
            waitsForConnectivity: waitsForConnectivity, connectivityBudget: budget)
    }

    /// Runs `operation` on the package's ``RetryLoop`` with the player's policy (``retry``): its pauses wait
    /// on the session's clock, and a seek or a stop abandons the request (a pause is woken early by the lane's
    /// signal; other wake-ups do not cut it short). An unreachable server is reported once as a connectivity warning.
    /// `once` tries a single time (a live reload, whose schedule is its retry). Each ``FetchLane`` has its own
    /// restarts (which abandon its requests) and its own wake-up signal (one waiter per signal).
    func attempt<T: Sendable>(
        keyURL: URL?, once: Bool = false, lane: Lane, _ operation: @escaping @Sendable () async throws -> T
    ) async -> Result<T, AttemptFailure> {
        let (wake, current, stopped) = (lane.wake, lane.generation, lane.stopped)
        let generation = current()
        let abandoned: @Sendable () -> Bool = { stopped() || current() != generation || Task.isCancelled }
        let keyTimeout = self.keyTimeout
        do {
            return .success(
                try await RetryLoop<T>.run(
                    policy: once ? .none : retry,
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
        lane: Lane, _ operation: @escaping @Sendable () async throws -> T
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

    /// A segment's bytes, its initialisation section first when it starts a run (an MPEG-TS run without one gets
    /// its program tables), with retries on `lane`.
    func segmentBytes(
        _ segment: SegmentReference, of rendition: Presentation.Rendition, newRun: Bool, lane: Lane
    ) async -> Result<Data, AttemptFailure> {
        await attempt(keyURL: segment.key?.uri, lane: lane) { [client, keyTimeout] in
            var head = newRun ? try await client.initialization(for: segment, of: rendition) : Data()
            let body = try await client.media(segment, of: rendition, keyTimeout: keyTimeout)
            if newRun, head.isEmpty { head = try await client.programTables(for: segment, media: body, of: rendition) }
            return head.isEmpty ? body : head + body
        }
    }

    /// The server cannot be reached: a warning, once until it can again.
    func lost(_ error: any Error & Sendable) {
        let first = connectionLost.withLock { lost -> Bool in
            defer { lost = true }
            return !lost
        }
        if first {
            report(
                PlayerError(
                    .internetConnectionUnavailable, severity: .warning,
                    "the server cannot be reached (\(error)); retrying",
                    underlying: error))
        }
    }

    /// A request succeeded: after a loss, a warning that the server can be reached again.
    func restored() {
        let was = connectionLost.withLock { lost -> Bool in
            defer { lost = false }
            return lost
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
    let task = Activity.task(activity, name: "request") {
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
