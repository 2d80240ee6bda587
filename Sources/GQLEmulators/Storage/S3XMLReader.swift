import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// An element of an XML request body (`<Delete>`, `<CompleteMultipartUpload>`): its local name, its text, its
/// children.
struct S3XMLNode: Sendable, Equatable {
    var name: String
    var text = ""
    var children: [S3XMLNode] = []

    /// The children named `name`.
    func all(_ name: String) -> [S3XMLNode] { children.filter { $0.name == name } }

    /// The text of the first child named `name`.
    func child(_ name: String) -> String? { children.first { $0.name == name }?.text }

    /// Reads `data` as XML with Foundation's parser (no external entities, no DTD loading); anything it cannot
    /// read, a document type declaration (where entities are declared: no request body of S3's has one, and an
    /// entity that expands to gigabytes must never reach the parser), or nesting deeper than 8 levels, is S3's
    /// `MalformedXML`. So is a body that is not UTF-8 (S3 reads only UTF-8): the search for a declaration is a
    /// search for its UTF-8 bytes.
    static func parse(_ data: Data) throws(S3Error) -> S3XMLNode {
        guard isUTF8(data), data.range(of: Data("<!DOCTYPE".utf8)) == nil, data.range(of: Data("<!ENTITY".utf8)) == nil
        else {
            throw StorageService.malformedXML
        }
        let builder = TreeBuilder()
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        parser.shouldProcessNamespaces = true
        parser.delegate = builder
        guard parser.parse(), !builder.failed, let root = builder.root else { throw StorageService.malformedXML }
        return root
    }

    /// Whether `data` is UTF-8 as the parser will read it: valid UTF-8 without NUL bytes (Foundation's parser
    /// takes `<` followed or preceded by NULs, or a UTF-16 or UTF-32 byte order mark, for UTF-16 or UTF-32), and an
    /// XML declaration, when there is one, that names no other encoding (the parser would switch to it).
    static func isUTF8(_ data: Data) -> Bool {
        guard !data.contains(0), String(validating: data, as: UTF8.self) != nil else { return false }
        let head = String(decoding: data.prefix(256), as: UTF8.self)
        guard head.hasPrefix("<?xml") || head.hasPrefix("\u{FEFF}<?xml") else { return true }
        let declaration = (head.range(of: "?>").map { head[..<$0.lowerBound] } ?? head[...]).lowercased()
        guard let encoding = declaration.range(of: "encoding") else { return true }
        let value = declaration[encoding.upperBound...].drop { $0.isWhitespace || $0 == "=" || $0 == "\"" || $0 == "'" }
        let name = value.prefix { $0 != "\"" && $0 != "'" }
        return name == "utf-8" || name == "utf8"
    }

    /// Builds the tree as the parser reports it.
    private final class TreeBuilder: NSObject, XMLParserDelegate {
        var stack: [S3XMLNode] = []
        var root: S3XMLNode?
        var failed = false

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            guard stack.count < 8, root == nil else {
                failed = true
                parser.abortParsing()
                return
            }
            stack.append(S3XMLNode(name: elementName))
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            guard !stack.isEmpty else { return }
            stack[stack.count - 1].text += string
        }

        func parser(
            _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?
        ) {
            guard var node = stack.popLast() else { return }
            node.text = node.text.trimmingCharacters(in: .whitespacesAndNewlines)
            if stack.isEmpty {
                root = node
            } else {
                stack[stack.count - 1].children.append(node)
            }
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) { failed = true }
    }
}
