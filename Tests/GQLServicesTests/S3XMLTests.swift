import Foundation
import GQLCore
import Testing

@testable import GQLServices

/// The reader of S3's XML answers: depth and size limits, entities, text in pieces.
struct S3XMLTests {
    static func read(_ text: String) -> Result<S3XML, S3XML.Refusal> { S3XML.read(Data(text.utf8)) }

    static func nested(_ depth: Int) -> String {
        String(repeating: "<a>", count: depth) + "x" + String(repeating: "</a>", count: depth)
    }

    @Test func aListingIsReadIntoItsElements() throws {
        let document = try Self.read(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><IsTruncated>false</IsTruncated>
            <Contents><Key>a</Key><Owner><ID>o1</ID></Owner></Contents><Contents><Key>b</Key></Contents>
            </ListBucketResult>
            """
        ).get()
        #expect(document.name == "ListBucketResult")
        #expect(document["IsTruncated"] == "false")
        #expect(document.children("Contents").map { $0["Key"] } == ["a", "b"])
        #expect(document.child("Contents")?.child("Owner")?["ID"] == "o1")
        #expect(document.children.map(\.name) == ["IsTruncated", "Contents", "Contents"])
    }

    /// The document of the crash: 50,000 levels, 350 KB. Refused at level 17, before any of it is built.
    @Test func deepDocumentsAreRefusedAtTheLimit() {
        #expect(Self.read(Self.nested(50_000)).failure == .tooDeep)
        #expect(Self.read(Self.nested(S3XML.maximumDepth + 1)).failure == .tooDeep)
        let deepest = try? Self.read(Self.nested(S3XML.maximumDepth)).get()
        var element = deepest
        for _ in 1..<S3XML.maximumDepth { element = element?.child("a") }
        #expect(element?.text == "x")
        #expect(element?.children.isEmpty == true)
    }

    @Test func documentsWithTooManyElementsAreRefused() {
        let many = "<r>" + String(repeating: "<e/>", count: S3XML.maximumElements) + "</r>"
        #expect(Self.read(many).failure == .tooManyElements)
        let enough = "<r>" + String(repeating: "<e/>", count: S3XML.maximumElements - 1) + "</r>"
        #expect((try? Self.read(enough).get())?.children.count == S3XML.maximumElements - 1)
    }

    @Test func entityDeclarationsAndUnknownEntitiesAreRefused() {
        var laughs = "<!ENTITY l0 \"ha\">"
        for level in 1...9 {
            laughs += "<!ENTITY l\(level) \"" + String(repeating: "&l\(level - 1);", count: 10) + "\">"
        }
        #expect(Self.read("<?xml version=\"1.0\"?><!DOCTYPE r [\(laughs)]><r><k>&l9;</k></r>").failure == .declarations)
        let external =
            "<?xml version=\"1.0\"?><!DOCTYPE r [<!ENTITY x SYSTEM \"file:///etc/hostname\">]><r><k>&x;</k></r>"
        #expect(Self.read(external).failure == .declarations)
        // Not declared at all: libxml2 recovers and would drop it; the document is refused instead.
        #expect(Self.read("<r><k>a&unknown;b</k></r>").failure == .malformed)
        // A bare ampersand is not well-formed either.
        #expect(Self.read("<r><k>a&b</k></r>").failure == .malformed)
    }

    /// The DTD scan reads UTF-8 bytes: a document in another encoding could spell `<!DOCTYPE` so the scan misses it
    /// and libxml2 decodes it, so such documents are refused before they are parsed.
    @Test func documentsInAnotherEncodingAreRefused() {
        let doctype = "<?xml version=\"1.0\"?><!DOCTYPE r [<!ENTITY e \"x\">]><r><k>&e;</k></r>"
        // UTF-16LE without a BOM: its first byte is still `<`.
        #expect(S3XML.read(doctype.data(using: .utf16LittleEndian) ?? Data()).failure == .malformed)
        let utf7 =
            "<?xml version=\"1.0\" encoding=\"UTF-7\"?>+ADw-!DOCTYPE r+AFs-+ADw-!ENTITY e +ACI-x+ACI-+AD4-+AF0-+AD4-<r><k>&e;</k></r>"
        #expect(Self.read(utf7).failure == .malformed)
        #expect(Self.read("<?xml version='1.0' encoding='ISO-8859-1'?><r><k>a</k></r>").failure == .malformed)
        // UTF-8 declared either way, or no encoding at all, is read.
        #expect(Self.read("<?xml version=\"1.0\" encoding=\"UTF-8\"?><r><k>a</k></r>").failure == nil)
        #expect(Self.read("<?xml version='1.0' encoding='utf-8'?><r><k>a</k></r>").failure == nil)
        #expect(Self.read("<?xml version=\"1.0\"?><r><k>a</k></r>").failure == nil)
    }

    /// Entity and character references, CDATA and long texts arrive in several pieces; none is lost.
    @Test func textInPiecesIsKeptWhole() throws {
        let long = String(repeating: "&amp;", count: 5000) + "end"
        let document = try Self.read(
            "<r><k>a&amp;b</k><k>x&lt;y&gt;z&quot;q&apos;</k><k>&#x41;&#233;&#x65E5;</k><k>\(long)</k>"
                + "<k>c<![CDATA[<d>&amp;]]>e</k></r>"
        ).get()
        #expect(
            document.children("k").map(\.text) == [
                "a&b", "x<y>z\"q'", "Aé日", String(repeating: "&", count: 5000) + "end", "c<d>&amp;e",
            ])
    }

    @Test func malformedDocumentsAreNil() throws {
        for text in ["", "not xml", "<r><k></r>", "<r/><s/>"] {
            #expect(try S3XML.parse(Data(text.utf8), answer: "the answer", operation: "list") == nil, "\(text)")
        }
        #expect(
            try S3XML.parse(Data([0x3C, 0x72, 0x3E, 0xFF, 0x3C, 0x2F, 0x72, 0x3E]), answer: "x", operation: "list")
                == nil)
        let error = #expect(throws: GQLError.self) {
            try S3XML.parse(Data(Self.nested(100).utf8), answer: "the answer to the list of b", operation: "list")
        }
        #expect(error?.code == .invalidResponse)
        #expect(error?.operation == "list")
        #expect(error?.message.contains("the answer to the list of b nests XML elements deeper than 16") == true)
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
