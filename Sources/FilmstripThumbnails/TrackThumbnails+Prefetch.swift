import FilmstripFormats
import FilmstripSync
import Foundation

extension TrackThumbnails {
    /// Fetches sheets ahead of a scrub, with ``ThumbnailsConfiguration/prefetchConcurrency`` downloads at a time:
    /// the sheet at `t` and the next ``prefetchLead`` in `direction` first, then a coarse wave (every third sheet over
    /// the whole timeline, so every time soon has a preview within one sheet of it), then the sheets nearest `t`,
    /// those ahead in `direction` first. The latest call wins: its queue replaces what earlier calls had queued;
    /// downloads already under way finish into the cache. Sheets already local are skipped. While a
    /// ``getThumbnail(atTimestamp:)`` miss downloads, no new prefetch download starts.
    public func prefetch(around t: Double, direction: ScrubDirection = .forward) {
        guard let source = currentSource else { return }
        let count = source.sheets.count
        guard count > 0 else { return }
        let here = source.entry(at: t, policy: .nearest)?.sheet ?? 0
        var order = PrefetchQueue.order(around: here, count: count, direction: direction, lead: Self.prefetchLead)
        order.removeAll { store.isLocal(source, sheet: $0) }
        let workers = prefetchQueue.replace(
            with: order, generation: source.generation, concurrency: max(1, configuration.prefetchConcurrency))
        for _ in 0..<workers {
            background.start(priority: .utility, detached: true) { [self] in
                while let sheet = prefetchQueue.next(generation: source.generation) {
                    guard !store.isLocal(source, sheet: sheet) else { continue }
                    // The sheet under the pointer goes first: while a miss downloads, prefetching starts nothing
                    // new, so on a slow link the miss is not split with sheets the viewer is not looking at.
                    await missesSettled()
                    do {
                        _ = try await store.fetch(source, sheet: sheet)
                    } catch {
                        logger.debug("prefetch failed", metadata: ["sheet": "\(sheet)", "error": "\(error)"])
                    }
                }
            }
        }
    }

    /// Returns when no `getThumbnail` miss is downloading or waiting to (at once when none is).
    func missesSettled() async {
        await state.wait(in: \.missWaiters) { $0.missFetches == 0 }
    }

    /// Sheets just ahead of the pointer that ``prefetch(around:direction:)`` fetches before its coarse wave.
    static let prefetchLead = 1

    /// Sheets queued for prefetching and not yet started.
    public var pendingPrefetches: Int { prefetchQueue.pending }

    /// Returns once the engine's own work is over: loads with a completion handler (and their call), prefetches
    /// and misses' fetches (a live track's reload loop is not waited for).
    package func settled() async { await background.settled() }

    /// Where the thumbnail for `t` is now: in memory, on disk, only remote, or nowhere (no cue).
    public func availability(at t: Double) -> ThumbnailAvailability {
        guard let source = currentSource, let entry = source.entry(at: t, policy: lookupPolicy) else { return .none }
        if store.hasInMemory(source, entry: entry) { return .inMemory }
        return store.isLocal(source, sheet: entry.sheet) ? .onDisk : .remote
    }

    /// Fetches (and, without a disk cache, decodes) a sheet in the background after a synchronous miss. Repeated
    /// misses for the same sheet while its fetch is under way start nothing new.
    func startBackgroundFetch(_ url: URL, source: ThumbnailSource, sheet: Int) {
        let key = source.sheetKey(sheet)
        let start = state.withLock { s -> Bool in
            guard !s.pendingFetches.contains(key) else { return false }
            guard s.missFetches < Self.missConcurrency else {
                s.waitingMisses.removeAll { $0.source.sheetKey($0.sheet) == key }
                s.waitingMisses.append((url, source, sheet))
                return false
            }
            s.missFetches += 1
            s.pendingFetches.insert(key)
            return true
        }
        guard start else { return }
        background.start(priority: .utility, detached: true) { [self] in
            var next: (url: URL, source: ThumbnailSource, sheet: Int)? = (url, source, sheet)
            while let (url, source, sheet) = next {
                do {
                    let data = try await store.fetch(source, sheet: sheet)
                    if loader.diskCache == nil || url.isFileURL || source.embedded != nil {
                        _ = try store.decoded(source: source, sheet: sheet, data: data)
                    }
                } catch {
                    logger.warning("background fetch failed", metadata: ["url": "\(url)", "error": "\(error)"])
                }
                // The slot goes to the latest miss that waited (one whose fetch has not started meanwhile).
                var settled = Waiters.Taken()
                next = state.withLock { s in
                    s.pendingFetches.remove(source.sheetKey(sheet))
                    while let waiting = s.waitingMisses.popLast() {
                        if s.pendingFetches.insert(waiting.source.sheetKey(waiting.sheet)).inserted { return waiting }
                    }
                    s.missFetches -= 1
                    if s.missFetches == 0 { settled = s.missWaiters.takeAll() }
                    return nil
                }
                // The prefetches held back by the misses go on.
                settled.resume()
            }
        }
    }
}
