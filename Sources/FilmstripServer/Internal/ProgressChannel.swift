import FilmstripSync

/// What `/api/progress` reports about one video's track.
enum ProgressEvent: Sendable, Equatable {
    /// `done` of `total` thumbnails are made.
    case progress(done: Int, total: Int)
    /// The track is ready: `cues` thumbnails, `origin` "beside", "cached" or "generated".
    case ready(cues: Int, origin: String)
    /// The track cannot be had.
    case failed(String)
}

/// Fans one preparation's progress out to any number of listeners. A listener that joins late first gets the
/// latest event, so nobody waits for a change that has already happened.
final class ProgressChannel: Sendable {
    private struct State {
        var latest: ProgressEvent?
        var finished = false
        var listeners: [Int: AsyncStream<ProgressEvent>.Continuation] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())

    /// A stream of events from now on, starting with the latest; it ends after the final event.
    func listen() -> AsyncStream<ProgressEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: ProgressEvent.self, bufferingPolicy: .bufferingNewest(64))
        let id = state.withLock { s -> Int in
            s.nextID += 1
            return s.nextID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.listeners.removeValue(forKey: id) }
        }
        // Registered and handed the latest event in one step, so no event falls between the two.
        let finished = state.withLock { s -> Bool in
            if let latest = s.latest { continuation.yield(latest) }
            if !s.finished { s.listeners[id] = continuation }
            return s.finished
        }
        if finished { continuation.finish() }
        return stream
    }

    /// Reports progress; ignored after the final event. Events reach each listener in the order they were
    /// published: they are handed over under the lock.
    func publish(_ event: ProgressEvent) {
        state.withLock { s in
            guard !s.finished else { return }
            s.latest = event
            for listener in s.listeners.values { listener.yield(event) }
        }
    }

    /// Reports the final event and ends every stream.
    func finish(_ event: ProgressEvent) {
        let listeners = state.withLock { s -> [AsyncStream<ProgressEvent>.Continuation] in
            guard !s.finished else { return [] }
            s.latest = event
            s.finished = true
            for listener in s.listeners.values { listener.yield(event) }
            defer { s.listeners.removeAll() }
            return Array(s.listeners.values)
        }
        // Outside the lock: finishing runs the stream's termination handler, which takes it.
        for listener in listeners { listener.finish() }
    }
}
