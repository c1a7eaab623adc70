/// Something that answers "which preview at second t": the `.tracks` engine (``TrackThumbnails``, from a preview
/// track) and the `.frames` engine (`FrameThumbnails`, from a stream's or file's keyframes). A seek bar holds one and
/// does not ask which.
public protocol PreviewProvider: AnyObject, Sendable {
    /// The preview for `t` (seconds on the video's timeline), fetching what it needs; `nil` when `t` has none.
    func thumbnail(at t: Double) async throws -> Thumbnail?
    /// Starts fetching what previews around `t` need, those ahead in `direction` first. Providers that decode on
    /// demand do nothing.
    func prefetch(around t: Double, direction: ScrubDirection)
}

extension PreviewProvider {
    /// Nothing to fetch ahead.
    public func prefetch(around t: Double, direction: ScrubDirection) {}
}

extension TrackThumbnails: PreviewProvider {}
