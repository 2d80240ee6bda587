import GQLCrypto
import NIOCore

/// Reads an `aws-chunked` body (`STREAMING-AWS4-HMAC-SHA256-PAYLOAD` and the `-TRAILER` forms): chunks of
/// `hex-size[;chunk-signature=SIG]\r\n DATA \r\n`, a last chunk of size 0, then trailing headers (a checksum) and
/// an empty line. With a signer, every chunk's signature is checked against the chain from the request's own, and a
/// trailer's `x-amz-trailer-signature` too; the data goes on as it arrives.
///
/// A class for its running digest (a `~Copyable` value); used by one task only.
final class AWSChunkedDecoder {
    private enum State {
        case header
        case data(remaining: Int)
        case dataEnd
        case trailer
        case done
    }

    private var state = State.header
    private var line: [UInt8] = []
    private var signer: ChunkSigner?
    private let signsTrailer: Bool
    private var expectedSignature: String?
    private var chunkDigest: Digest?
    /// The trailing headers, names lowercased (`x-amz-checksum-crc32`).
    private(set) var trailers: [(name: String, value: String)] = []
    private var trailerText = ""
    /// Whether the trailer's signature was checked: only the closing empty line may follow it.
    private var trailerSigned = false
    /// The longest chunk header or trailer line accepted.
    static let maxLine = 4096

    init(signer: ChunkSigner?, signsTrailer: Bool) {
        self.signer = signer
        self.signsTrailer = signsTrailer
    }

    var isDone: Bool { if case .done = state { true } else { false } }

    /// Feeds the next bytes of the body; `emit` gets the data bytes in order.
    func feed(_ buffer: ByteBuffer, emit: (ByteBuffer) throws(S3Error) -> Void) throws(S3Error) {
        var view = buffer.readableBytesView[...]
        while !view.isEmpty {
            switch state {
            case .header, .trailer, .dataEnd:
                guard let byte = view.popFirst() else { return }
                if byte == UInt8(ascii: "\n") {
                    if line.last == UInt8(ascii: "\r") { line.removeLast() }
                    let text = line
                    line.removeAll(keepingCapacity: true)
                    try endOfLine(text)
                } else {
                    line.append(byte)
                    guard line.count <= Self.maxLine else { throw Self.malformed("a chunk header is too long") }
                }
            case .data(let remaining):
                let take = min(remaining, view.count)
                guard let piece = buffer.getSlice(at: view.startIndex, length: take) else { return }
                do {
                    try piece.withUnsafeReadableBytes { bytes in try chunkDigest?.update(bytes) }
                } catch {
                    throw S3Error(.internalError, "A chunk could not be hashed.")
                }
                try emit(piece)
                view = view.dropFirst(take)
                state = remaining == take ? .dataEnd : .data(remaining: remaining - take)
            case .done:
                guard view.allSatisfy({ $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") }) else {
                    throw Self.malformed("bytes follow the last chunk")
                }
                return
            }
        }
    }

    private func endOfLine(_ text: [UInt8]) throws(S3Error) {
        switch state {
        case .dataEnd:
            guard text.isEmpty else { throw Self.malformed("a chunk's data is longer than its size") }
            try verifyChunk()
            state = .header
        case .header:
            try chunkHeader(String(decoding: text, as: UTF8.self))
        case .trailer:
            try trailerLine(String(decoding: text, as: UTF8.self))
        case .data, .done:
            break
        }
    }

    private func chunkHeader(_ text: String) throws(S3Error) {
        let parts = text.split(separator: ";", maxSplits: 1)
        guard let sizeText = parts.first, let size = Int(sizeText, radix: 16), size >= 0, sizeText.count <= 16 else {
            throw Self.malformed("a chunk size is not hexadecimal")
        }
        if signer != nil {
            guard parts.count == 2, parts[1].hasPrefix("chunk-signature=") else {
                throw Self.malformed("a chunk has no chunk-signature")
            }
            expectedSignature = String(parts[1].dropFirst("chunk-signature=".count))
        }
        if signer != nil {
            do {
                chunkDigest = try Digest(.sha256)
            } catch {
                throw S3Error(.internalError, "A chunk could not be hashed.")
            }
        }
        if size == 0 {
            try verifyChunk()
            state = .trailer
        } else {
            state = .data(remaining: size)
        }
    }

    /// Checks the chunk just read against its signature (when signed), and moves the chain on.
    private func verifyChunk() throws(S3Error) {
        guard var signer, let expected = expectedSignature else { return }
        let hash: [UInt8]
        do {
            hash = try chunkDigest.take()?.finalize() ?? SHA256.hash([UInt8]())
        } catch {
            throw S3Error(.internalError, "A chunk could not be hashed.")
        }
        let signature = signer.chunkSignature(dataHash: hash)
        guard Bytes.constantTimeEquals(Array(expected.lowercased().utf8), Array(signature.utf8)) else {
            throw S3Error(
                .signatureDoesNotMatch,
                "The request signature we calculated does not match the signature you provided (a chunk's "
                    + "signature).")
        }
        signer.previous = signature
        self.signer = signer
    }

    private func trailerLine(_ text: String) throws(S3Error) {
        if trailerSigned, !text.isEmpty {
            throw Self.malformed("a trailing header follows the x-amz-trailer-signature")
        }
        if text.isEmpty {
            if signsTrailer, signer != nil {
                throw Self.malformed("the trailer has no x-amz-trailer-signature")
            }
            state = .done
            return
        }
        guard let colon = text.firstIndex(of: ":") else { throw Self.malformed("a trailing header has no colon") }
        let name = text[..<colon].lowercased()
        let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        if name == "x-amz-trailer-signature" {
            guard let signer, signsTrailer else { throw Self.malformed("an unexpected trailer signature") }
            let expected = signer.trailerSignature(trailer: trailerText)
            guard Bytes.constantTimeEquals(Array(value.lowercased().utf8), Array(expected.utf8)) else {
                throw S3Error(
                    .signatureDoesNotMatch,
                    "The request signature we calculated does not match the signature you provided (the trailer's "
                        + "signature).")
            }
            // The signature ends the trailer; only the closing empty line may follow (nothing unsigned).
            self.signer = nil
            trailerSigned = true
            return
        }
        guard trailers.count < 16 else { throw Self.malformed("too many trailing headers") }
        trailers.append((name, value))
        trailerText += "\(name):\(value)\n"
    }

    private static func malformed(_ why: String) -> S3Error {
        S3Error(.incompleteBody, "The aws-chunked body is malformed: \(why).")
    }
}
