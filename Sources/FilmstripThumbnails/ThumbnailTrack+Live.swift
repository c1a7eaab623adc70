import FilmstripFormats

/// A live track's reloads: what changed between two readings, the readings merged, and the window kept.
extension ThumbnailTrack {
    /// Cues in `new` and not here, and cues here and not in `new`.
    func cueChanges(to new: ThumbnailTrack) -> (added: Int, removed: Int) {
        let old = Set(cues.map(CueIdentity.init))
        let fresh = Set(new.cues.map(CueIdentity.init))
        return (fresh.subtracting(old).count, old.subtracting(fresh).count)
    }

    /// What makes a cue the same cue across reloads.
    private struct CueIdentity: Hashable {
        var start: Int64
        var end: Int64
        var region: SpatialRegion?
        var tile: TileCell?
        init(_ cue: ThumbnailCue) {
            start = cue.startMilliseconds
            end = cue.endMilliseconds
            region = cue.region
            tile = cue.tile
        }
    }

    /// These cues and `new`'s together (a cue of `new` replaces one of these with the same times), sorted.
    func merging(_ new: ThumbnailTrack) -> ThumbnailTrack {
        let old = self
        var images = ImageSlots(new.images)
        let fresh = Set(new.cues.map { [$0.startMilliseconds, $0.endMilliseconds] })
        var cues = new.cues
        for cue in old.cues where !fresh.contains([cue.startMilliseconds, cue.endMilliseconds]) {
            var moved = cue
            moved.imageIndex = images.slot(for: old.imageURL(of: cue))
            cues.append(moved)
        }
        cues.sort { $0.startMilliseconds < $1.startMilliseconds }
        var track = ThumbnailTrack(
            sourceURL: new.sourceURL, cues: cues, images: images.images, diagnostics: new.diagnostics)
        track.format = new.format
        return track
    }

    /// The track without the cues that end more than `window` seconds before its newest cue.
    func windowed(keeping window: Double) -> ThumbnailTrack {
        let track = self
        guard let newest = track.cues.map(\.endMilliseconds).max() else { return track }
        let cutoff = newest - Int64(window * 1000)
        var kept = track
        kept.cues = track.cues.filter { $0.endMilliseconds > cutoff }
        return kept
    }
}
