public import Foundation

/// The one check before any local file is opened: only a regular file is read. A device (`/dev/urandom`,
/// `/dev/zero`), a FIFO (whose open blocks until a writer comes) or a socket never is.
public enum LocalFile {
    /// The size of the regular file at `url`, or `nil` when there is none there (missing, or not a regular file).
    public static func regularFileSize(_ url: URL) -> Int64? {
        guard url.isFileURL, let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
            attributes[.type] as? FileAttributeType == .typeRegular
        else { return nil }
        return (attributes[.size] as? NSNumber)?.int64Value
    }

    /// Why `url` cannot be read as a file ("no such file", "not a regular file"), or `nil` when it can.
    public static func problem(_ url: URL) -> String? {
        guard FileManager.default.fileExists(atPath: url.path) else { return "no such file" }
        guard regularFileSize(url) != nil else { return "not a regular file (a device, a FIFO or a socket)" }
        return nil
    }
}
