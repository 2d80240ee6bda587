/// Refuses text nested deeper than ``limit`` brackets before it reaches the recursive parser (whose stack a
/// 2,000-deep selection would exhaust) or the generator (whose output the Swift compiler would choke on).
enum NestingGuard {
    /// Selections, lists, objects and argument lists, counted together.
    static let limit = 100

    /// - Throws: ``GQLCodegen/Failure`` at the first bracket past the limit.
    static func check(_ text: String, file: String) throws {
        var depth = 0, line = 1, column = 0
        var inString = false, inBlock = false, inComment = false
        var quotes = 0, escaped = false
        for scalar in text.unicodeScalars {
            column += 1
            if scalar == "\n" {
                line += 1
                column = 0
                inComment = false
                if inString && !inBlock { inString = false }
                continue
            }
            if inComment { continue }
            if scalar == "\"" && !escaped {
                quotes += 1
                if quotes == 3 {
                    quotes = 0
                    if !inString || inBlock {
                        inBlock.toggle()
                        inString = inBlock
                    }
                }
                continue
            }
            if quotes > 0 {
                // One quote (or two: an empty string) opened or closed a plain string.
                if !inBlock && quotes == 1 { inString.toggle() }
                quotes = 0
            }
            if inString {
                escaped = !escaped && scalar == "\\" && !inBlock
                continue
            }
            switch scalar {
            case "#": inComment = true
            case "{", "[", "(":
                depth += 1
                if depth > limit {
                    throw GQLCodegen.Failure([
                        .init(
                            .error, file: file, line: line, column: column,
                            "nested deeper than \(limit) levels; the generator refuses it")
                    ])
                }
            case "}", "]", ")": depth = max(0, depth - 1)
            default: break
            }
        }
    }
}
