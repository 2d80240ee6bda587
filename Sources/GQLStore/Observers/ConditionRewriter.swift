/// Rewrites the `OBJ.` prefix of an observer condition to `NEW.` or `OLD.` for a trigger's WHEN clause,
/// leaving string literals and quoted identifiers untouched.
enum ConditionRewriter {
    static func rewrite(_ condition: String, row: String) -> String {
        let chars = Array(condition.unicodeScalars)
        var out = String.UnicodeScalarView()
        var i = 0
        var previousIsWord = false
        while i < chars.count {
            let c = chars[i]
            // Quoted text: '…', "…", `…`, […] are copied as they are.
            if c == "'" || c == "\"" || c == "`" || c == "[" {
                let close: Unicode.Scalar = c == "[" ? "]" : c
                out.append(c)
                i += 1
                while i < chars.count {
                    out.append(chars[i])
                    if chars[i] == close {
                        // A doubled quote inside the literal continues it.
                        if close != "]", i + 1 < chars.count, chars[i + 1] == close {
                            out.append(chars[i + 1])
                            i += 2
                            continue
                        }
                        i += 1
                        break
                    }
                    i += 1
                }
                previousIsWord = false
                continue
            }
            if !previousIsWord, i + 3 < chars.count,
                String(String.UnicodeScalarView(chars[i..<i + 3])).uppercased() == "OBJ", chars[i + 3] == "."
            {
                out.append(contentsOf: row.unicodeScalars)
                out.append(".")
                i += 4
                previousIsWord = false
                continue
            }
            previousIsWord = c.properties.isAlphabetic || c == "_" || ("0"..."9").contains(c) || c == "$"
            out.append(c)
            i += 1
        }
        return String(out)
    }
}
