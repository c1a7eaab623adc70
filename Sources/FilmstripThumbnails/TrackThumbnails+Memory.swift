import FilmstripFormats
import FilmstripImaging
import FilmstripLoading
import FilmstripSync
import Foundation
import Logging

// MARK: Memory and cache

extension TrackThumbnails {
    /// Removes every stored track and image from this engine's disk cache, and empties its memory caches.
    public func deleteLocalCache() {
        do {
            try loader.diskCache?.removeAll()
        } catch {
            logger.error("cannot empty the disk cache", metadata: ["error": "\(error)"])
        }
        purgeMemory()
    }

    /// Frees decoded sheets, encoded thumbnails and, without a disk cache, downloaded sheet bytes (call on memory
    /// pressure). The track stays loaded; images are
    /// decoded again from the disk cache when next asked for.
    public func purgeMemory() {
        store.purge()
    }

    /// Stops any load under way, unloads the track and frees memory. The disk cache is kept.
    public func reset() {
        liveTracking.replace(nil)
        prefetchQueue.clear()
        let tasks = state.withLock { s -> [Task<Void, Never>] in
            s.loadGeneration += 1
            s.source = nil
            s.waitingMisses.removeAll()
            defer { s.completionTasks.removeAll() }
            return Array(s.completionTasks.values)
        }
        for task in tasks { task.cancel() }
        purgeMemory()
    }
}
