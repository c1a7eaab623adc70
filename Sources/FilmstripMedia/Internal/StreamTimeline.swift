import CFFmpeg

/// Where an input's decoded stream puts its times: seconds per time-base unit, the timestamp that is 0 s, and the
/// duration the container or stream declares.
struct StreamTimeline {
    /// Seconds per stream time-base unit.
    var timeBase: Double
    /// Stream start in time-base units (times are reported relative to it).
    var start: Int64
    /// Duration in seconds (0 when unknown).
    var duration: Double

    /// Before a stream is chosen.
    static let none = StreamTimeline(timeBase: 0, start: 0, duration: 0)

    private init(timeBase: Double, start: Int64, duration: Double) {
        (self.timeBase, self.start, self.duration) = (timeBase, start, duration)
    }

    /// The timeline of `stream` in `context`. With `movieZero`, MP4/MOV count from the movie's 0, which players
    /// show first (a first picture with a composition offset and no edit list is at that offset), whether or not
    /// probing filled in a start time. Otherwise, when `fromFileStart`, times count from the file's start (its
    /// earliest stream's first timestamp), as `ffmpeg -ss` counts them: a video that starts after its audio (an
    /// MPEG-PS whose pictures begin at 1 s) starts after 0.
    init(
        of stream: UnsafeMutablePointer<AVStream>, in context: UnsafeMutablePointer<AVFormatContext>, movieZero: Bool,
        fromFileStart: Bool
    ) {
        let base = stream.pointee.time_base
        timeBase = base.den != 0 ? Double(base.num) / Double(base.den) : 1.0 / 90_000
        start = stream.pointee.start_time == fs_nopts_value() ? 0 : stream.pointee.start_time
        if movieZero, ContainerFacts.isIndexedContainer(context) {
            start = 0
        } else if fromFileStart, let fileStart = ContainerFacts.fileStart(context, in: base), fileStart < start {
            start = fileStart
        }
        if context.pointee.duration != fs_nopts_value(), context.pointee.duration > 0 {
            duration = Double(context.pointee.duration) / Double(fs_time_base())
        } else if stream.pointee.duration != fs_nopts_value(), stream.pointee.duration > 0 {
            duration = Double(stream.pointee.duration) * timeBase
        } else {
            duration = 0
        }
    }

    /// Seconds from the start.
    func seconds(_ timestamp: Int64) -> Double { Double(timestamp - start) * timeBase }

    /// The stream's own time of a timestamp, in seconds (no start subtracted).
    func mediaSeconds(_ timestamp: Int64) -> Double { Double(timestamp) * timeBase }

    /// The timestamp at `seconds` from the start (rounded down).
    func timestamp(_ seconds: Double) -> Int64 { start + Int64((seconds / timeBase).rounded(.down)) }

    /// Where the start is on the stream's own time, seconds.
    var startSeconds: Double { mediaSeconds(start) }
}
