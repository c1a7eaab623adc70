package import Foundation

/// The images of a track, each listed once: an image's slot is its index in `images`, the value cues carry in
/// `imageIndex`.
package struct ImageSlots<Key: Hashable> {
    package private(set) var images: [URL] = []
    private var slots: [Key: Int32] = [:]

    package init() {}

    /// The slot of `key`; a key not seen before appends `url` and comes back with `added` set.
    package mutating func slot(for key: Key, url: URL) -> (slot: Int32, added: Bool) {
        if let known = slots[key] { return (known, false) }
        let slot = Int32(images.count)
        slots[key] = slot
        images.append(url)
        return (slot, true)
    }
}

extension ImageSlots where Key == URL {
    /// Slots for a track's existing images, in their order (the first of equal URLs keeps its slot).
    package init(_ images: [URL]) {
        self.images = images
        slots = Dictionary(images.enumerated().map { ($1, Int32($0)) }, uniquingKeysWith: { first, _ in first })
    }

    /// The slot of `url`, added when new.
    package mutating func slot(for url: URL) -> Int32 { slot(for: url, url: url).slot }
}
