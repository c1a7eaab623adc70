/// The names other player SDKs use for these settings, so code written against them reads the same.
extension PlayerConfiguration {
    /// ``live`` under the name other SDKs use.
    public var liveConfiguration: LiveConfiguration {
        get { live }
        set { live = newValue }
    }

    /// ``network`` under the name other SDKs use.
    public var networkConfiguration: NetworkConfiguration? {
        get { network }
        set { network = newValue }
    }

    /// ``stateTimeouts`` under the name other SDKs use; `nil` disables every state timeout.
    public var stateTimeoutConfiguration: StateTimeoutConfiguration? {
        get { stateTimeouts }
        set { stateTimeouts = newValue }
    }
}

extension StateTimeoutConfiguration {
    /// A configuration from seconds per state (0 disables that state's timeout); each omitted state keeps its
    /// SPEC 4.4 default.
    ///
    /// ```swift
    /// config.stateTimeoutConfiguration = StateTimeoutConfiguration(openingSeconds: 15, bufferingSeconds: 30, seekingSeconds: 20)
    /// ```
    public init(
        idleSeconds: Double = 0, openingSeconds: Double = 15, readySeconds: Double = 10,
        bufferingSeconds: Double = 30, playSeconds: Double = 10, playingSeconds: Double = 0,
        pausingSeconds: Double = 10, pausedSeconds: Double = 0, seekingSeconds: Double = 20,
        endedSeconds: Double = 0, stoppingSeconds: Double = 10, errorSeconds: Double = 0
    ) {
        self.init()
        idle = idleSeconds
        opening = openingSeconds
        ready = readySeconds
        buffering = bufferingSeconds
        play = playSeconds
        playing = playingSeconds
        pausing = pausingSeconds
        paused = pausedSeconds
        seeking = seekingSeconds
        ended = endedSeconds
        stopping = stoppingSeconds
        error = errorSeconds
    }
}
