/// Writes the XML of S3's answers: elements with escaped text, a declaration first.
struct XMLWriter {
    private(set) var text = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"

    mutating func open(_ name: String, namespace: Bool = false) {
        text += namespace ? #"<\#(name) xmlns="http://s3.amazonaws.com/doc/2006-03-01/">"# : "<\(name)>"
    }

    mutating func close(_ name: String) { text += "</\(name)>" }

    mutating func appendRaw(_ raw: String) { text += raw }

    mutating func element(_ name: String, _ value: String) {
        text += "<\(name)>\(Self.escape(value))</\(name)>"
    }

    /// `value` with `&`, `<`, `>`, `"` and `'` escaped, and characters XML 1.0 cannot carry (control characters
    /// other than tab, newline and return) as character references S3 also uses.
    static func escape(_ value: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(value.utf8.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            case "\t", "\n", "\r": escaped.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20: escaped += "&#x\(String(scalar.value, radix: 16, uppercase: true));"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}

extension XMLWriter {
    /// Text inside the open element, escaped.
    mutating func characters(_ value: String) { appendRaw(Self.escape(value)) }
}
