import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// An XML element of an S3 answer: its name, its text and its children. S3 answers are small documents without
/// mixed content or attributes that matter, so a tree of these is all a client needs.
struct S3XML: Sendable {
    var name: String
    var text = ""
    var children: [S3XML] = []

    /// The first child named `name`.
    func child(_ name: String) -> S3XML? { children.first { $0.name == name } }

    /// Every child named `name`.
    func children(_ name: String) -> [S3XML] { children.filter { $0.name == name } }

    /// The text of the first child named `name`.
    subscript(_ name: String) -> String? { child(name)?.text }

    /// Parses a document; nil when it is not well-formed XML.
    static func parse(_ data: Data) -> S3XML? {
        let builder = Builder()
        let parser = XMLParser(data: data)
        parser.delegate = builder
        parser.shouldResolveExternalEntities = false
        guard parser.parse(), let root = builder.root else { return nil }
        return root
    }

    /// `&`, `<`, `>`, `"` and `'` as entities, for text written into a request body.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(character)
            }
        }
        return out
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var stack: [S3XML] = []
        var root: S3XML?

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            stack.append(S3XML(name: elementName))
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            guard !stack.isEmpty else { return }
            stack[stack.count - 1].text += string
        }

        func parser(
            _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?
        ) {
            guard let element = stack.popLast() else { return }
            if stack.isEmpty {
                root = element
            } else {
                stack[stack.count - 1].children.append(element)
            }
        }
    }
}
