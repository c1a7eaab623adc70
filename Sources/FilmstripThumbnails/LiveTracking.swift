import FilmstripFormats
import FilmstripLoading
import FilmstripStreaming
import FilmstripSync
import Foundation
import Logging

/// How a live source is read again.
enum LiveOrigin: Sendable {
    /// A live HLS image playlist or a dynamic MPD, read again by the streaming client.
    case stream(ImageTrackRefresh)
    /// A WebVTT or JSON track loaded as live: its validators for conditional requests, and how much it keeps.
    case sidecar(url: URL, interval: Double, window: Double, etag: String?, lastModified: String?)

    var url: URL {
        switch self {
        case .stream(let refresh): refresh.url
        case .sidecar(let url, _, _, _, _): url
        }
    }

    var cadence: LiveRefreshSchedule.Cadence {
        switch self {
        case .stream(let refresh): refresh.cadence
        case .sidecar(_, let interval, _, _, _): .sidecar(interval: interval)
        }
    }
}

/// The reload loop of the live source, and the streams that hear about its changes.
final class LiveTracking: Sendable {
    private struct State {
        var task: Task<Void, Never>?
        var streams: [Int: AsyncStream<TrackChange>.Continuation] = [:]
        var nextStream = 0
    }

    private let state = Mutex(State())

    /// Reads `origin` again on its cadence (sooner after a change, backing off after a failure) until `reload`
    /// says the source is no longer current (`nil`) or another loop replaces this one.
    func start(
        _ origin: LiveOrigin, clock: any Clock<Duration>, logger: Logger,
        reload: @escaping @Sendable (LiveOrigin) async throws -> (LiveOrigin, Bool)?
    ) {
        let task = Task.detached(priority: .utility) {
            var schedule = LiveRefreshSchedule(origin.cadence)
            var origin = origin
            var delay = schedule.first
            while !Task.isCancelled {
                do { try await clock.sleep(for: delay) } catch { return }
                do {
                    guard let (next, changed) = try await reload(origin) else { return }
                    origin = next
                    delay = schedule.loaded(changed: changed)
                } catch {
                    logger.warning(
                        "live track reload failed", metadata: ["url": "\(origin.url)", "error": "\(error)"])
                    delay = schedule.failed()
                }
            }
        }
        replace(task)
    }

    func replace(_ task: Task<Void, Never>?) {
        let old = state.withLock { s -> Task<Void, Never>? in
            defer { s.task = task }
            return s.task
        }
        old?.cancel()
    }

    func stream() -> AsyncStream<TrackChange> {
        AsyncStream { continuation in
            let id = state.withLock { s -> Int in
                s.nextStream += 1
                s.streams[s.nextStream] = continuation
                return s.nextStream
            }
            continuation.onTermination = { [weak self] _ in
                _ = self?.state.withLock { $0.streams.removeValue(forKey: id) }
            }
        }
    }

    func publish(_ change: TrackChange) {
        for continuation in state.withLock({ Array($0.streams.values) }) { continuation.yield(change) }
    }

    deinit {
        state.withLock { s in
            s.task?.cancel()
            for continuation in s.streams.values { continuation.finish() }
        }
    }
}
