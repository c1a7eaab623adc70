/// Where a download stands, as ``Downloader/progress`` reports it after each file.
public struct DownloadProgress: Sendable, Hashable {
    /// Bytes stored so far (those verified by an earlier run included).
    public var bytes: Int64
    /// The download's size as estimated from the renditions' declared bandwidth and duration, corrected as files
    /// arrive.
    public var estimatedBytes: Int64
    /// Files stored, of ``totalFiles``.
    public var files: Int
    /// Files in the download (segments, initialisation sections, keys, preview images).
    public var totalFiles: Int
    /// Files a previous run stored and verified, not fetched again.
    public var resumedFiles: Int
    /// Bytes per second fetched in this run.
    public var bytesPerSecond: Double
    /// Seconds left at the current rate; `nil` until something was fetched.
    public var estimatedTimeLeft: Double?

    public init(
        bytes: Int64, estimatedBytes: Int64, files: Int, totalFiles: Int, resumedFiles: Int, bytesPerSecond: Double,
        estimatedTimeLeft: Double?
    ) {
        self.bytes = bytes
        self.estimatedBytes = estimatedBytes
        self.files = files
        self.totalFiles = totalFiles
        self.resumedFiles = resumedFiles
        self.bytesPerSecond = bytesPerSecond
        self.estimatedTimeLeft = estimatedTimeLeft
    }

    /// Files stored as a fraction of all (0 to 1).
    public var fraction: Double { totalFiles == 0 ? 1 : Double(files) / Double(totalFiles) }
}
