import FilmstripFormats
import FilmstripSync
import Foundation

/// The sheets still to prefetch, in order, and how many workers run; the latest ``TrackThumbnails/prefetch(around:direction:)``
/// replaces the queue.
final class PrefetchQueue: Sendable {
    private struct State {
        var generation = -1
        var queue: [Int] = []
        var running = 0
    }

    private let state = Mutex(State())

    /// Replaces the queued work; returns how many workers to start to reach `concurrency`.
    func replace(with sheets: [Int], generation: Int, concurrency: Int) -> Int {
        state.withLock { s in
            s.generation = generation
            s.queue = sheets.reversed()  // popped from the end
            let start = max(0, min(concurrency, sheets.count) - s.running)
            s.running += start
            return start
        }
    }

    /// The next sheet for a worker of `generation`; `nil` ends the worker.
    func next(generation: Int) -> Int? {
        state.withLock { s in
            guard s.generation == generation, let sheet = s.queue.popLast() else {
                s.running -= 1
                return nil
            }
            return sheet
        }
    }

    /// Sheets still queued.
    var pending: Int { state.withLock { $0.queue.count } }

    /// Drops the queued work (a new load or a reset); downloads under way finish.
    func clear() { state.withLock { $0.queue.removeAll() } }

    /// The order to fetch `count` sheets in for a pointer over sheet `here` moving in `direction`: that sheet and the
    /// next `lead` in the direction, then a coarse wave (every third sheet, from the middle of each group of three),
    /// then the rest nearest first, those behind the scrub counting double the distance.
    static func order(around here: Int, count: Int, direction: ScrubDirection, lead: Int) -> [Int] {
        var order: [Int] = []
        order.reserveCapacity(count)
        var queued = Set<Int>()
        let step = direction == .forward ? 1 : -1
        for sheet in (0...lead).map({ here + $0 * step }) where (0..<count).contains(sheet) {
            if queued.insert(sheet).inserted { order.append(sheet) }
        }
        for sheet in stride(from: min(1, count - 1), to: count, by: 3) where queued.insert(sheet).inserted {
            order.append(sheet)
        }
        let rest = (0..<count).filter { !queued.contains($0) }.sorted { a, b in
            func cost(_ s: Int) -> Int {
                let ahead = direction == .forward ? s >= here : s <= here
                return abs(s - here) * (ahead ? 1 : 2)
            }
            return (cost(a), a) < (cost(b), b)
        }
        return order + rest
    }
}
