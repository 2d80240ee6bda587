import Foundation
import GQLCore

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// An XML element of an S3 answer: its name, its text and its children. S3 answers are small documents without
/// mixed content or attributes that matter, so a tree of these is all a client needs.
///
/// The elements live in one flat array (children by index), so a document of any shape is built and freed without
/// recursion; the parse itself is libxml2's SAX stream driven by a loop. S3's documents are a few levels deep
/// (`ListBucketResult` › `Contents` › `Owner` › `ID` is the deepest), so ``parse(_:answer:operation:)`` refuses
/// one nested deeper than ``maximumDepth`` or holding more than ``maximumElements`` elements before it is built,
/// and one with a document type declaration (S3 never sends one; entities are declared there) before it is read.
struct S3XML: Sendable {
    /// The deepest nesting accepted; the root is at depth 1.
    static let maximumDepth = 16
    /// The most elements accepted: a listing page of 1,000 objects with every optional field has about 15,000.
    static let maximumElements = 100_000

    private struct Element: Sendable {
        var name: String
        var text = ""
        var children: [Int] = []
    }

    /// Every element of the document, the root first.
    private let elements: [Element]
    private let index: Int

    private init(elements: [Element], index: Int) {
        self.elements = elements
        self.index = index
    }

    /// The element's name.
    var name: String { elements[index].name }

    /// The element's text (its character data, entity and character references and CDATA sections, in order).
    var text: String { elements[index].text }

    /// The element's children, in document order.
    var children: [S3XML] { elements[index].children.map { S3XML(elements: elements, index: $0) } }

    /// The first child named `name`.
    func child(_ name: String) -> S3XML? {
        elements[index].children.first { elements[$0].name == name }.map { S3XML(elements: elements, index: $0) }
    }

    /// Every child named `name`.
    func children(_ name: String) -> [S3XML] {
        elements[index].children.filter { elements[$0].name == name }.map { S3XML(elements: elements, index: $0) }
    }

    /// The text of the first child named `name`.
    subscript(_ name: String) -> String? { child(name)?.text }

    /// Why a document was not read.
    enum Refusal: Error, Equatable {
        /// Not well-formed XML (or no root element).
        case malformed
        /// Nested deeper than ``maximumDepth``.
        case tooDeep
        /// More than ``maximumElements`` elements.
        case tooManyElements
        /// A document type declaration (where entities are declared).
        case declarations
    }

    /// Whether the document's XML declaration, if it has one, names UTF-8 (or no encoding, which means UTF-8).
    static func declaresUTF8OrNothing(_ data: Data) -> Bool {
        guard data.starts(with: Data("<?xml".utf8)) else { return true }
        let prolog = data.prefix { $0 != UInt8(ascii: ">") }
        let text = String(decoding: prolog, as: UTF8.self).lowercased()
        guard let range = text.range(of: "encoding") else { return true }
        let rest = text[range.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\t" }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return false }
        let name = rest.dropFirst().prefix { $0 != quote }
        return name == "utf-8" || name == "utf8"
    }

    /// Parses a document, or says why it was refused.
    static func read(_ data: Data) -> Result<S3XML, Refusal> {
        // FoundationXML tells its delegate nothing of a DTD (libxml2 substitutes the entities it declares, or drops
        // an external one silently), so one is looked for in the bytes: S3 never sends a DTD. A document that does
        // not start with `<` in an ASCII-compatible encoding (UTF-16, say) could hide one, and is refused too.
        let start = data.starts(with: [0xEF, 0xBB, 0xBF]) ? data.index(data.startIndex, offsetBy: 3) : data.startIndex
        guard let first = data[start...].first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }), first == 0x3C
        else { return .failure(.malformed) }
        // The scan for a DTD only holds for UTF-8: a NUL byte (UTF-16 or UTF-32 without a BOM) or a declaration of
        // another encoding (UTF-7 spells `<` as `+ADw-`) is refused before libxml2 could decode one.
        if data.contains(0) || !Self.declaresUTF8OrNothing(data[start...]) { return .failure(.malformed) }
        if data.range(of: Data("<!DOCTYPE".utf8)) != nil { return .failure(.declarations) }
        let builder = Builder()
        let parser = XMLParser(data: data)
        parser.delegate = builder
        parser.shouldResolveExternalEntities = false
        parser.externalEntityResolvingPolicy = .never
        let parsed = parser.parse()
        if let refusal = builder.refusal { return .failure(refusal) }
        // FoundationXML parses in libxml2's recovery mode, where parse() may succeed after an error was reported.
        guard parsed, !builder.sawError, builder.stack.isEmpty, let root = builder.root else {
            return .failure(.malformed)
        }
        return .success(S3XML(elements: builder.elements, index: root))
    }

    /// Parses `data`, the answer to `operation`; nil when it is not well-formed XML.
    ///
    /// - Parameter answer: what errors call the document (`the answer to the list of …`).
    /// - Throws: ``GQLError`` `.invalidResponse` naming `operation` when the document is nested deeper than
    ///   ``maximumDepth``, holds more than ``maximumElements`` elements, or declares a DTD or entities.
    static func parse(_ data: Data, answer: @autoclosure () -> String, operation: String) throws -> S3XML? {
        switch read(data) {
        case .success(let document): return document
        case .failure(.malformed): return nil
        case .failure(let refusal):
            let reason =
                switch refusal {
                case .tooDeep: "nests XML elements deeper than \(maximumDepth) levels"
                case .tooManyElements: "has more than \(maximumElements) XML elements"
                default: "has a document type declaration"
                }
            throw GQLError(
                .invalidResponse, "\(answer()) \(reason), which no S3 document does: refused", operation: operation)
        }
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

    /// Builds the flat element table from the parser's events, with the open elements on a stack of indices.
    private final class Builder: NSObject, XMLParserDelegate {
        var elements: [Element] = []
        var stack: [Int] = []
        var root: Int?
        var refusal: Refusal?
        var sawError = false

        private func refuse(_ reason: Refusal, _ parser: XMLParser) {
            if refusal == nil { refusal = reason }
            parser.abortParsing()
        }

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            guard refusal == nil else { return }
            guard stack.count < S3XML.maximumDepth else { return refuse(.tooDeep, parser) }
            guard elements.count < S3XML.maximumElements else { return refuse(.tooManyElements, parser) }
            // A second root is not well-formed (libxml2 reports it too).
            guard !stack.isEmpty || root == nil else { return refuse(.malformed, parser) }
            let index = elements.count
            elements.append(Element(name: elementName))
            if let parent = stack.last { elements[parent].children.append(index) } else { root = index }
            stack.append(index)
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            // libxml2 hands text over in pieces (each entity reference is one): they are appended in order.
            guard refusal == nil, let current = stack.last else { return }
            elements[current].text += string
        }

        func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
            guard refusal == nil, let current = stack.last else { return }
            guard let string = String(data: CDATABlock, encoding: .utf8) else { return refuse(.malformed, parser) }
            elements[current].text += string
        }

        func parser(
            _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?
        ) {
            guard refusal == nil else { return }
            _ = stack.popLast()
        }

        func parser(_ parser: XMLParser, resolveExternalEntityName name: String, systemID: String?) -> Data? {
            // An undeclared entity (only the five predefined ones and character references are read).
            refuse(.malformed, parser)
            return nil
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
            sawError = true
        }
    }
}
