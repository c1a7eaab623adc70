public import Foundation

/// XML Schema values used by MPDs: `xs:duration` and `xs:dateTime`.
public enum XSValues {
    /// Seconds of an `xs:duration` such as `PT1H2M3.5S` or `P1DT2H` (a year counts 365 days, a month 30).
    public static func duration(_ text: String) -> Double? {
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        var sign = 1.0
        if rest.first == "-" {
            sign = -1
            rest = rest.dropFirst()
        }
        guard rest.first == "P" else { return nil }
        rest = rest.dropFirst()
        var total = 0.0
        var inTime = false
        var number = ""
        var sawComponent = false
        for c in rest {
            switch c {
            case "T":
                guard !inTime, number.isEmpty else { return nil }
                inTime = true
            case "0"..."9", ".":
                number.append(c)
            case "Y", "M", "D", "H", "S", "W":
                guard let value = Double(number), value >= 0 else { return nil }
                number = ""
                sawComponent = true
                switch (c, inTime) {
                case ("Y", false): total += value * 365 * 86_400
                case ("M", false): total += value * 30 * 86_400
                case ("W", false): total += value * 7 * 86_400
                case ("D", false): total += value * 86_400
                case ("H", true): total += value * 3600
                case ("M", true): total += value * 60
                case ("S", true): total += value
                default: return nil
                }
            default:
                return nil
            }
        }
        guard number.isEmpty, sawComponent, total.isFinite else { return nil }
        return sign * total
    }

    /// An `xs:dateTime` (`2024-05-01T12:00:00Z`, fractional seconds and `±hh:mm` offsets allowed; no zone means
    /// UTC, as DASH clients read it).
    public static func dateTime(_ text: String) -> Date? {
        let bytes = Array(text.trimmingCharacters(in: .whitespaces).utf8)
        var i = 0
        func number(_ digits: Int) -> Int? {
            guard i + digits <= bytes.count else { return nil }
            var value = 0
            for k in 0..<digits {
                let c = bytes[i + k]
                guard c >= 0x30, c <= 0x39 else { return nil }
                value = value * 10 + Int(c - 0x30)
            }
            i += digits
            return value
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < bytes.count, bytes[i] == c else { return false }
            i += 1
            return true
        }
        guard let year = number(4), expect(0x2D), let month = number(2), expect(0x2D), let day = number(2),
            i < bytes.count, bytes[i] == 0x54 || bytes[i] == 0x74 || bytes[i] == 0x20
        else { return nil }
        i += 1
        guard let hour = number(2), expect(0x3A), let minute = number(2), expect(0x3A), let second = number(2),
            (1...12).contains(month), (1...31).contains(day), hour <= 24, minute < 60, second <= 60
        else { return nil }
        var fraction = 0.0
        if i < bytes.count, bytes[i] == 0x2E {
            i += 1
            var scale = 0.1
            var any = false
            while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 {
                fraction += Double(bytes[i] - 0x30) * scale
                scale /= 10
                i += 1
                any = true
            }
            guard any else { return nil }
        }
        var zone = 0
        if i < bytes.count {
            switch bytes[i] {
            case 0x5A, 0x7A: i += 1
            case 0x2B, 0x2D:
                let negative = bytes[i] == 0x2D
                i += 1
                guard let h = number(2), expect(0x3A) || true, let m = number(2) else { return nil }
                zone = (h * 3600 + m * 60) * (negative ? -1 : 1)
            default: return nil
            }
        }
        guard i == bytes.count else { return nil }
        // Days from 1970-01-01 (proleptic Gregorian).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 + second - zone) + fraction
        return Date(timeIntervalSince1970: seconds)
    }
}
