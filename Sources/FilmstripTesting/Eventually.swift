/// Waits until `condition` holds, looking every 10 ms, for at most `seconds`; returns whether it held.
///
/// For tests whose verdict is whether something happens, not how soon: the default bound (120 s) is long enough
/// for a machine whose cores are busy with other work, and a condition that holds ends the wait at once.
public func eventually(within seconds: Double = 120, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return true
}
