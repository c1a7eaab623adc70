import Foundation

/// One item's outcome: a line of `DIR/results/shard-I.jsonl` (and of `catalog generate --json`).
public struct CatalogRecord: Sendable, Hashable, Codable {
    /// How the item ended.
    public enum Status: String, Sendable, Hashable, Codable {
        /// Its outputs are complete.
        case done
        /// It could not be made; the next run tries again.
        case failed
    }

    /// Why an item failed.
    public struct Failure: Sendable, Hashable, Codable {
        /// A category: `input_unavailable`, `invalid_media`, `no_video_stream`, `unsupported_codec`,
        /// `decode_failed`, `timed_out`, `output_failed`, `invalid_argument`, `storage`, `cancelled`…
        public var kind: String
        /// The message.
        public var message: String
    }

    /// Seconds spent per step.
    public struct Timings: Sendable, Hashable, Codable {
        /// Reading the input's identity (a `stat`, or one request).
        public var identify: Double
        /// Generating the outputs.
        public var generate: Double
        /// Syncing them and renaming the folder into place.
        public var commit: Double
        /// All of it, waiting for another process's lock included.
        public var total: Double
    }

    /// The item's key; `nil` when its identity could not be read.
    public var key: ContentKey?
    /// The input as listed.
    public var input: String
    /// How it ended.
    public var status: Status
    /// The shard that ran it, `I/N`.
    public var shard: String
    /// The item's folder relative to the catalog.
    public var directory: String?
    /// The output files, relative to the catalog.
    public var outputs: [String]
    /// Thumbnails made (main width).
    public var thumbnails: Int?
    /// The video's duration in seconds.
    public var duration: Double?
    /// Bytes read from the input (over HTTP: what was fetched).
    public var bytesRead: Int?
    /// Bytes of the outputs.
    public var bytesWritten: Int64?
    /// Seconds per step.
    public var seconds: Timings
    /// Why it failed.
    public var error: Failure?
    /// `true` when the outputs were made again with `--force`.
    public var forced: Bool?
    /// `true` when a run found the item complete without a `done` line (its maker was killed between the
    /// rename and the line): the line is written from the completion marker.
    public var recovered: Bool?
    /// The host and process that wrote the line.
    public var host: String
    /// The process id.
    public var pid: Int32
    /// When (ISO 8601, UTC).
    public var finished: String
}

extension CatalogRecord {
    /// Now, as the records write it.
    static func timestamp(_ date: Date = Date()) -> String {
        date.formatted(
            .iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }

    /// This machine's name.
    static let hostName = ProcessInfo.processInfo.hostName
}

extension CatalogRecord {
    /// The record as its line in the results (without the newline).
    public var jsonLine: String {
        guard let data = try? JSONEncoder.catalog.encodeLine(self) else { return "{}" }
        return String(decoding: data.dropLast(), as: UTF8.self)
    }
}
