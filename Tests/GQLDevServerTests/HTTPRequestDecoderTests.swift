import Foundation
import GQLCore
import Testing

@testable import GQLDevServer

/// A single-object body is read member by member, without a GQLValue for the whole body: every body must decode
/// exactly as it did from the whole value (the same request, or the same failure, word for word).
@Suite struct HTTPRequestDecoderTests {
    /// The decoding of a body as the whole value gave it: the value first, then its members.
    private func wholeValue(_ bytes: [UInt8]) -> Result<HTTPRequestDecoder.Payload, HTTPRequestDecoder.Failure> {
        let value: GQLValue
        do {
            value = try GQLValue(jsonBytes: bytes)
        } catch {
            return .failure(.init("The body is not valid JSON: \(error)"))
        }
        guard case .object(let object) = value else { return HTTPRequestDecoder.decodeBody(bytes) }
        return HTTPRequestDecoder.request(from: object).map(HTTPRequestDecoder.Payload.single)
    }

    @Test func singleObjectsDecodeAsTheWholeValueDid() {
        let query = #""query Get($id: ID!) { getObjects(objectId: $id) { objectId text } }""#
        let texts: [String] = [
            #"{"query":\#(query),"variables":{"id":"seed-0"}}"#,
            #"  {"variables":{"id":"seed-0","n":[1,2.5,true,null]}, "operationName":"Get", "query":\#(query)}  "#,
            #"{"query":"{ a }\n{ b }\t\"c\" \\ \/ \u00e9 \ud83d\ude00","operationName":null,"variables":null}"#,
            #"{"query":"{ a }","operationName":""}"#,
            #"{"query":"{ a }","query":"{ b }","extensions":{"persistedQuery":{"version":1}}}"#,
            #"{"query":"{ a }","variables":[1]}"#,
            #"{"query":"{ a }","operationName":7}"#,
            #"{"query":null}"#,
            #"{"query":{"nested":true}}"#,
            #"{}"#,
            #"{"query":"{ a }"} x"#,
            #"{"query":"{ a }",}"#,
            #"{"query":"{ a }""#,
            #"{"query":"\ud800"}"#,
            #"{"query":"tab\#tinside"}"#,
            #"{"query":nul}"#,
            #"{"qu\u0065ry":"{ a }"}"#,
            #"[{"query":"{ a }"}]"#,
            #""{ a }""#,
            "",
        ]
        var bodies: [[UInt8]] = texts.map { Array($0.utf8) }
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        bodies.append(bom + Array(#"{"query":"{ a }"}"#.utf8))
        let badUTF8: [UInt8] = [0xC3, 0x28]
        bodies.append(Array(#"{"query":""#.utf8) + badUTF8 + Array(#""}"#.utf8))
        let badByte: [UInt8] = [0xFF]
        bodies.append(Array(#"{"query":"é","variables":{"k":""#.utf8) + badByte + Array(#""}}"#.utf8))
        bodies.append(Array(repeating: UInt8(ascii: "{"), count: 600))
        for body in bodies {
            #expect(
                HTTPRequestDecoder.decodeBody(body) == wholeValue(body),
                "\(String(decoding: body.prefix(80), as: UTF8.self))")
        }
        // The common body is read as a request, not refused.
        guard case .success(.single(let request)) = HTTPRequestDecoder.decodeBody(bodies[1]) else {
            Issue.record("the body with variables first was refused")
            return
        }
        #expect(request.operationName == "Get")
        #expect(request.variables["n"] == .array([.int(1), .double(2.5), .bool(true), .null]))
    }
}
