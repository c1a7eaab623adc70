import Foundation
import Testing

@testable import FilmstripStreaming

@Suite("Dates a time server or a playlist gives, read without ICU")
struct ServerDateTests {
    @Test("an RFC 7231 date from a UTCTiming server")
    func httpDate() {
        let date = UTCTimingClock.httpDate("Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(date?.timeIntervalSince1970 == 784_111_777)
        #expect(UTCTimingClock.httpDate("Sun, 06 Nov 1994 08:49:37 UTC") == nil)
        #expect(UTCTimingClock.httpDate("Sun, 06 Foo 1994 08:49:37 GMT") == nil)
    }

    @Test("hostile dates are nil, never a signal (ICU's parser died with SIGFPE on the first)")
    func hostile() {
        for text in [
            "NaN-01-01T1:0:1.000000000000000000000000000000000000010.00Z",
            "Sun, 06 Nov 99999999999999999999 08:49:37 GMT", "Sun, 6 Nov 1994 8:49:37 GMT", "", ",,,,,",
            String(repeating: "9", count: 10_000), "2024-13-01T00:00:00Z", "2024-01-01T25:00:00Z",
        ] {
            #expect(UTCTimingClock.httpDate(text) == nil)
        }
    }
}
