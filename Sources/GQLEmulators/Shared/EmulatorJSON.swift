import Foundation
import GQLCore
import HTTPTypes
import Hummingbird
import NIOCore

/// What the JSON emulators (Auth0's, OneSignal's) share: a request body read with a size cap and a deadline, and
/// parsed as JSON or a form; answers as JSON.
enum EmulatorJSON {
    /// Why a body could not be read.
    enum BodyFailure: Error, Equatable {
        /// Larger than the cap.
        case tooLarge
        /// No byte arrived for too long.
        case timedOut
        /// The connection ended or the body was malformed.
        case unreadable
        /// Not JSON (or not an object where one was needed), or a form that does not decode.
        case malformed(String)
    }

    /// The request's body, at most `limit` bytes, all of it within `timeout` (a slow body is refused, not waited
    /// for).
    static func body(_ request: Request, limit: Int, timeout: Duration) async throws(BodyFailure) -> [UInt8] {
        do {
            return try await withThrowingTaskGroup(of: [UInt8].self) { group in
                group.addTask {
                    var buffer = try await request.body.collect(upTo: limit)
                    return buffer.readBytes(length: buffer.readableBytes) ?? []
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    throw BodyFailure.timedOut
                }
                defer { group.cancelAll() }
                guard let first = try await group.next() else { throw BodyFailure.unreadable }
                return first
            }
        } catch let failure as BodyFailure {
            throw failure
        } catch is NIOTooManyBytesError {
            throw .tooLarge
        } catch let error as HTTPResponseError where error.status == .contentTooLarge {
            throw .tooLarge
        } catch {
            throw .unreadable
        }
    }

    /// The fields of a JSON object or `application/x-www-form-urlencoded` body, by its Content-Type (JSON when
    /// none is given); an empty body has none.
    static func fields(_ bytes: [UInt8], contentType: String?) throws(BodyFailure) -> GQLValues {
        guard !bytes.isEmpty else { return [:] }
        let type = (contentType ?? "").lowercased()
        if type.hasPrefix("application/x-www-form-urlencoded") {
            guard let text = String(validating: bytes, as: UTF8.self) else { throw .malformed("the form is not UTF-8") }
            var fields: GQLValues = [:]
            for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard let name = decodeFormComponent(parts[0]),
                    let value = parts.count > 1 ? decodeFormComponent(parts[1]) : ""
                else { throw .malformed("the form has a field that does not decode") }
                fields[name] = .string(value)
            }
            return fields
        }
        do {
            guard case .object(let object) = try GQLValue(json: Data(bytes)) else {
                throw BodyFailure.malformed("the body is not a JSON object")
            }
            return object
        } catch let failure as BodyFailure {
            throw failure
        } catch {
            throw .malformed("the body is not valid JSON")
        }
    }

    private static func decodeFormComponent(_ text: Substring) -> String? {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }

    /// A JSON answer; `extra` headers added (`Cache-Control: no-store` on token answers).
    static func response(_ status: HTTPResponse.Status, _ body: GQLValue, extra: HTTPFields = [:]) -> Response {
        let data = (try? body.jsonData()) ?? Data("{}".utf8)
        var headers = extra
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.contentLength] = String(data.count)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A plain-text answer.
    static func text(_ status: HTTPResponse.Status, _ text: String, extra: HTTPFields = [:]) -> Response {
        var headers = extra
        headers[.contentType] = "text/plain; charset=utf-8"
        headers[.contentLength] = String(text.utf8.count)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
