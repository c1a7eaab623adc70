extension Duration {
    /// The duration in seconds, as a `Double` (what timers, dates and time intervals take).
    public var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
