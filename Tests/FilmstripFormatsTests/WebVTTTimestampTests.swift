import FilmstripFormats
import Foundation
import Testing

@Suite("WebVTT thumbnail parser: timestamps")
struct WebVTTTimestampTests {
    @Test(
        "hours are optional, of any number of digits (as browsers read them)",
        arguments: [
            ("00:01.500", 1_500 as Int64),
            ("1:00:01.000", 3_601_000),
            ("59:59.999", 3_599_999),
            ("00:00:01.500", 1_500),
            ("01:02:03.004", 3_723_004),
            ("100:00:00.000", 360_000_000),
            ("1000:00:00.001", 3_600_000_001),
        ])
    func validTimestamps(_ text: String, _ expected: Int64) throws {
        let track = try parse("WEBVTT\n\n\(text) --> 9999:00:00.000\na.jpg\n")
        #expect(track.cues.first?.startMilliseconds == expected)
    }

    @Test(
        "formatted timestamps parse back to the same time",
        arguments: [
            0 as Int64, 1, 999, 1000, 59_999, 60_000, 3_599_999, 3_600_000, 86_399_999, 360_000_000_001,
        ])
    func formatRoundTrip(_ ms: Int64) throws {
        let text = WebVTTTimestamp.string(milliseconds: ms)
        let track = try parse("WEBVTT\n\n\(text) --> 999999999:00:00.000\na.jpg\n")
        #expect(track.cues.first?.startMilliseconds == ms, "\(text)")
    }

    struct Bad: Sendable, CustomStringConvertible {
        var timing: String
        var column: Int
        var message: String
        var description: String { timing }
    }

    @Test(
        "each kind of bad timestamp is an error with line, column and snippet",
        arguments: [
            Bad(timing: "0:01.000 --> 00:02.000", column: 1, message: "minutes must have exactly two digits"),
            Bad(timing: "000:01.000 --> 00:02.000", column: 1, message: "minutes must have exactly two digits"),
            Bad(timing: "60:00.000 --> 61:00.000", column: 1, message: "minutes must be between 00 and 59"),
            Bad(timing: "00:60.000 --> 01:00.000", column: 4, message: "seconds must be between 00 and 59"),
            Bad(timing: "00:1.000 --> 00:02.000", column: 4, message: "seconds must have exactly two digits"),
            Bad(timing: "00:01.00 --> 00:02.000", column: 7, message: "the fraction must have exactly three digits"),
            Bad(timing: "00:01.0000 --> 00:02.000", column: 7, message: "the fraction must have exactly three digits"),
            Bad(
                timing: "00:01,000 --> 00:02.000", column: 6,
                message: "expected '.' and three fraction digits, found ','"),
            Bad(timing: "00:01 --> 00:02.000", column: 6, message: "expected '.' and three fraction digits"),
            Bad(timing: "00:00:60.000 --> 00:01:00.000", column: 7, message: "seconds must be between 00 and 59"),
            Bad(timing: "00:60:00.000 --> 01:00:00.000", column: 4, message: "minutes must be between 00 and 59"),
            Bad(timing: "-00:01.000 --> 00:02.000", column: 1, message: "expected a timestamp"),
            Bad(
                timing: "00:01.000 --> 00:02.00", column: 21,
                message: "end time: the fraction must have exactly three digits"),
            Bad(timing: "00:01.000 -> 00:02.000", column: 11, message: "expected '-->' after the start time"),
            Bad(timing: "00:01.000 --> ", column: 15, message: "end time: expected a timestamp"),
            Bad(timing: "00:01.000\u{0B}--> 00:02.000", column: 10, message: "expected '-->' after the start time"),
        ])
    func badTimestamps(_ bad: Bad) throws {
        let text = "WEBVTT\n\nNOTE before\n\n\(bad.timing)\na.jpg\n\n00:10.000 --> 00:11.000\nb.jpg\n"
        let error = try #require(parseError(text))
        #expect(error.line == 5)
        #expect(error.column == bad.column)
        #expect(error.message.contains(bad.message), "\(error.message)")
        #expect(error.snippet == bad.timing)
        #expect(error.description.hasPrefix("5:\(bad.column): "))
        let lenient = try parse(text, mode: .lenient)
        #expect(lenient.cues.count == 1)
        #expect(lenient.diagnostics.count == 1)
        #expect(lenient.diagnostics.first?.line == 5)
    }
}
