import Foundation
import HTTPTypes
import Hummingbird
import NIOHTTP1

/// An S3 error answer: the status, S3's code, a message, and the XML body S3 sends
/// (`<Error><Code>…</Code><Message>…</Message><Resource>…</Resource><RequestId>…</RequestId></Error>`).
struct S3Error: Error, Sendable {
    /// S3's error codes the emulator answers, with their statuses.
    struct Code: Sendable, Equatable {
        let name: String
        let status: HTTPResponse.Status

        static let accessDenied = Code(name: "AccessDenied", status: .forbidden)
        static let badDigest = Code(name: "BadDigest", status: .badRequest)
        static let bucketAlreadyOwnedByYou = Code(name: "BucketAlreadyOwnedByYou", status: .conflict)
        static let bucketNotEmpty = Code(name: "BucketNotEmpty", status: .conflict)
        static let entityTooLarge = Code(name: "EntityTooLarge", status: .badRequest)
        static let entityTooSmall = Code(name: "EntityTooSmall", status: .badRequest)
        static let incompleteBody = Code(name: "IncompleteBody", status: .badRequest)
        static let invalidAccessKeyId = Code(name: "InvalidAccessKeyId", status: .forbidden)
        static let invalidArgument = Code(name: "InvalidArgument", status: .badRequest)
        static let invalidBucketName = Code(name: "InvalidBucketName", status: .badRequest)
        static let invalidDigest = Code(name: "InvalidDigest", status: .badRequest)
        static let invalidPart = Code(name: "InvalidPart", status: .badRequest)
        static let invalidPartOrder = Code(name: "InvalidPartOrder", status: .badRequest)
        static let invalidRange = Code(name: "InvalidRange", status: .rangeNotSatisfiable)
        static let invalidRequest = Code(name: "InvalidRequest", status: .badRequest)
        static let keyTooLong = Code(name: "KeyTooLongError", status: .badRequest)
        static let malformedXML = Code(name: "MalformedXML", status: .badRequest)
        static let metadataTooLarge = Code(name: "MetadataTooLarge", status: .badRequest)
        static let methodNotAllowed = Code(name: "MethodNotAllowed", status: .methodNotAllowed)
        static let missingContentLength = Code(name: "MissingContentLength", status: .lengthRequired)
        static let noSuchBucket = Code(name: "NoSuchBucket", status: .notFound)
        static let noSuchKey = Code(name: "NoSuchKey", status: .notFound)
        static let noSuchUpload = Code(name: "NoSuchUpload", status: .notFound)
        static let notImplemented = Code(name: "NotImplemented", status: .notImplemented)
        static let preconditionFailed = Code(name: "PreconditionFailed", status: .preconditionFailed)
        static let requestHeaderFieldsTooLarge = Code(name: "RequestHeaderSectionTooLarge", status: .badRequest)
        static let requestTimeout = Code(name: "RequestTimeout", status: .badRequest)
        static let requestTimeTooSkewed = Code(name: "RequestTimeTooSkewed", status: .forbidden)
        static let signatureDoesNotMatch = Code(name: "SignatureDoesNotMatch", status: .forbidden)
        static let internalError = Code(name: "InternalError", status: .internalServerError)
        static let authorizationHeaderMalformed = Code(name: "AuthorizationHeaderMalformed", status: .badRequest)
        static let authorizationQueryParametersError = Code(
            name: "AuthorizationQueryParametersError", status: .badRequest)
        static let xAmzContentSHA256Mismatch = Code(name: "XAmzContentSHA256Mismatch", status: .badRequest)
    }

    var code: Code
    var message: String
    /// The bucket or object the request named (`/bucket/key`), when any.
    var resource: String?
    /// Extra elements S3 adds for some codes (`<BucketName>`, `<Key>`), in order.
    var details: [(String, String)] = []

    init(_ code: Code, _ message: String, resource: String? = nil, details: [(String, String)] = []) {
        self.code = code
        self.message = message
        self.resource = resource
        self.details = details
    }

    /// The XML body.
    func xml(requestId: String) -> String {
        var xml = XMLWriter()
        xml.open("Error")
        xml.element("Code", code.name)
        xml.element("Message", message)
        for (name, value) in details { xml.element(name, value) }
        if let resource { xml.element("Resource", resource) }
        xml.element("RequestId", requestId)
        xml.close("Error")
        return xml.text
    }

    /// The answer; a HEAD's carries no body (as S3's).
    func response(requestId: String = S3Error.newRequestId(), head: Bool = false) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/xml"
        headers[.s3RequestId] = requestId
        if head { return Response(status: code.status, headers: headers) }
        let body = xml(requestId: requestId)
        headers[.contentLength] = String(body.utf8.count)
        return Response(status: code.status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    /// A fresh request id: 16 uppercase hex digits, as S3's.
    static func newRequestId() -> String {
        String(UInt64.random(in: .min ... .max), radix: 16, uppercase: true).leftPadded(to: 16)
    }

    /// What the connection guard answers itself (408, 400, 431) in S3's shape.
    static let refusalBody: @Sendable (HTTPResponseStatus, String) -> (contentType: String, body: String) = {
        status, message in
        let code: Code =
            switch status.code {
            case 408: .requestTimeout
            case 431: .requestHeaderFieldsTooLarge
            default: .invalidRequest
            }
        return ("application/xml", S3Error(code, message).xml(requestId: newRequestId()))
    }
}

extension String {
    /// The string with `0`s in front up to `length` characters.
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
