/// A value with its position, for task-group children whose results arrive out of order.
///
/// Child tasks of a task group return this struct, never a tuple: under `-O` the Swift 6.1–6.3 compilers can hand the
/// parent a corrupted tuple from a child task (the index read back was 0x200000000 in a release build of `gallery`,
/// which then trapped on `results[index] = …`; swiftlang/swift#91911, merged and reverted by #92155). `make lint`
/// refuses tuple-typed task-group children (`Scripts/check-task-groups.py`).
public struct Indexed<Value: Sendable>: Sendable {
    /// The position.
    public let index: Int
    /// The value.
    public let value: Value

    /// Creates an indexed value.
    public init(_ index: Int, _ value: Value) {
        self.index = index
        self.value = value
    }
}
