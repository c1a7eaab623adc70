import FilmstripSync

/// A least-recently-used cache bounded by the total cost (bytes) of its values, and optionally by count.
///
/// Lookups and insertions are O(1): a dictionary maps keys to slots of an array-backed doubly linked list.
/// Thread-safe; every operation holds a `Mutex` for a few dozen nanoseconds.
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Node {
        var key: Key
        var value: Value
        var cost: Int
        var previous: Int
        var next: Int
    }

    private struct Storage {
        var nodes: [Node?] = []
        var free: [Int] = []
        var slots: [Key: Int] = [:]
        var head = -1  // most recently used
        var tail = -1  // least recently used
        var totalCost = 0
        var hits = 0
        var misses = 0
        var evictions = 0
    }

    private let storage = Mutex(Storage())
    /// The most total cost kept.
    public let costLimit: Int
    /// The most entries kept.
    public let countLimit: Int

    /// Creates a cache.
    public init(costLimit: Int, countLimit: Int = .max) {
        self.costLimit = max(0, costLimit)
        self.countLimit = max(0, countLimit)
    }

    /// The value for `key`, marking it most recently used.
    public func value(for key: Key) -> Value? {
        storage.withLock { s in
            guard let slot = s.slots[key] else {
                s.misses += 1
                return nil
            }
            s.hits += 1
            Self.moveToFront(&s, slot)
            return s.nodes[slot]!.value
        }
    }

    /// Inserts or replaces a value. A value costlier than the whole limit is not kept.
    public func insert(_ value: Value, for key: Key, cost: Int) {
        storage.withLock { s in
            if let slot = s.slots[key] { Self.remove(&s, slot) }
            guard cost <= costLimit, countLimit > 0 else { return }
            let node = Node(key: key, value: value, cost: cost, previous: -1, next: s.head)
            let slot: Int
            if let reused = s.free.popLast() {
                slot = reused
                s.nodes[slot] = node
            } else {
                slot = s.nodes.count
                s.nodes.append(node)
            }
            if s.head >= 0 { s.nodes[s.head]!.previous = slot }
            s.head = slot
            if s.tail < 0 { s.tail = slot }
            s.slots[key] = slot
            s.totalCost += cost
            while s.totalCost > costLimit || s.slots.count > countLimit, s.tail >= 0 {
                Self.remove(&s, s.tail)
                s.evictions += 1
            }
        }
    }

    /// Removes the value for `key`.
    public func removeValue(for key: Key) {
        storage.withLock { s in
            if let slot = s.slots[key] { Self.remove(&s, slot) }
        }
    }

    /// Removes everything (for memory pressure).
    public func removeAll() {
        storage.withLock { $0 = Storage() }
    }

    /// Number of entries.
    public var count: Int { storage.withLock { $0.slots.count } }
    /// Sum of the entries' costs.
    public var totalCost: Int { storage.withLock { $0.totalCost } }
    /// Keys from most to least recently used.
    public var keysByRecency: [Key] {
        storage.withLock { s in
            var keys: [Key] = []
            var slot = s.head
            while slot >= 0 {
                keys.append(s.nodes[slot]!.key)
                slot = s.nodes[slot]!.next
            }
            return keys
        }
    }
    /// Hits, misses and evictions since creation.
    public var statistics: (hits: Int, misses: Int, evictions: Int) {
        storage.withLock { ($0.hits, $0.misses, $0.evictions) }
    }

    private static func unlink(_ s: inout Storage, _ slot: Int) {
        let node = s.nodes[slot]!
        if node.previous >= 0 { s.nodes[node.previous]!.next = node.next } else { s.head = node.next }
        if node.next >= 0 { s.nodes[node.next]!.previous = node.previous } else { s.tail = node.previous }
    }

    private static func moveToFront(_ s: inout Storage, _ slot: Int) {
        guard s.head != slot else { return }
        unlink(&s, slot)
        s.nodes[slot]!.previous = -1
        s.nodes[slot]!.next = s.head
        if s.head >= 0 { s.nodes[s.head]!.previous = slot }
        s.head = slot
        if s.tail < 0 { s.tail = slot }
    }

    private static func remove(_ s: inout Storage, _ slot: Int) {
        unlink(&s, slot)
        let node = s.nodes[slot]!
        s.slots[node.key] = nil
        s.totalCost -= node.cost
        s.nodes[slot] = nil
        s.free.append(slot)
    }
}
