import Foundation

/// A JSON value that keeps object keys in the order they were written.
indirect enum JSON {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])

    /// Compact serialisation on one line.
    var text: String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .int(let value): out += String(value)
        case .double(let value):
            if value.isFinite {
                out += value == value.rounded() && abs(value) < 1e15 ? String(format: "%.1f", value) : "\(value)"
            } else {
                out += "null"
            }
        case .string(let value): Self.escape(value, into: &out)
        case .array(let values):
            out += "["
            for (i, value) in values.enumerated() {
                if i > 0 { out += "," }
                value.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out += ", " }
                Self.escape(key, into: &out)
                out += ": "
                value.write(to: &out)
            }
            out += "}"
        }
    }

    private static func escape(_ string: String, into out: inout String) {
        out += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
