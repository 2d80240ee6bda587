import CCrypto
import GQLCore

/// PEM text in and out of libcrypto through memory BIOs, and the error queue kept clean after a refusal.
enum OpenSSLBIO {
    /// Calls `body` with a read-only BIO over `text`.
    static func reading<T>(_ text: String, _ body: (OpaquePointer) -> T) throws -> T {
        let bytes = Array(text.utf8)
        guard bytes.count < Int(Int32.max) else { throw GQLError(.crypto, "the PEM text is too long") }
        return try bytes.withUnsafeBufferPointer { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else {
                throw GQLError(.crypto, "libcrypto could not allocate a buffer")
            }
            defer { BIO_free(bio) }
            return body(bio)
        }
    }

    /// The text `body` writes into a memory BIO (`body` returns 1 on success).
    static func writing(_ body: (OpaquePointer) -> Int32) throws -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw GQLError(.crypto, "libcrypto could not allocate a buffer") }
        defer { BIO_free(bio) }
        guard body(bio) == 1 else {
            clearErrors()
            throw GQLError(.crypto, "libcrypto could not write the key as PEM")
        }
        var bytes = [UInt8](repeating: 0, count: Int(BIO_ctrl_pending(bio)))
        let read = bytes.withUnsafeMutableBufferPointer { BIO_read(bio, $0.baseAddress, Int32($0.count)) }
        return String(decoding: bytes.prefix(max(0, Int(read))), as: UTF8.self)
    }

    /// Empties this thread's libcrypto error queue, so an expected refusal leaves nothing behind.
    static func clearErrors() { ERR_clear_error() }
}
