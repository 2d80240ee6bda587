/// Swift source lines at an indentation, four spaces a level.
struct SwiftWriter {
    private(set) var text = ""
    private var level = 0

    mutating func line(_ content: String = "") {
        if content.isEmpty {
            text += "\n"
        } else {
            text += String(repeating: "    ", count: level) + content + "\n"
        }
    }

    /// `switch subject {`, the cases at the switch's own level (Swift's style), `}`.
    mutating func switchBlock(_ subject: String, _ body: (inout SwiftWriter) throws -> Void) rethrows {
        line("switch \(subject) {")
        try body(&self)
        line("}")
    }

    /// Opens a block that ``close()`` ends.
    mutating func open(_ opening: String) {
        line(opening + " {")
        level += 1
    }

    mutating func close() {
        level -= 1
        line("}")
    }

    /// `opening {`, the body one level in, `}`.
    mutating func block(_ opening: String, _ body: (inout SwiftWriter) throws -> Void) rethrows {
        line(opening + " {")
        level += 1
        try body(&self)
        level -= 1
        line("}")
    }
}
