import Foundation
import GQLCrypto

/// A multipart upload's checksum rules, as S3's API reference and S3's own answers have them today: the algorithm
/// and type CreateMultipartUpload sets (`x-amz-checksum-algorithm`, `x-amz-checksum-type`), what an UploadPart may
/// declare, what CompleteMultipartUpload may list for its parts and send for the whole object, and the object's
/// checksum. Every algorithm S3 names is recognised, so the rules that need no computing hold for all of them (a
/// part declaring another algorithm than the upload's is refused, a composite upload's completion must list each
/// part's checksum of its algorithm). The emulator computes CRC-32, CRC-64/NVME and MD5 (a part's MD5 is its ETag):
/// the parts of those uploads are checked and listed. An upload started with CRC-32C, SHA-1, SHA-256, SHA-512 or
/// an XXHash has its parts' checksums neither checked nor listed, its completion's listed part checksums are taken
/// unchecked, and its object gets S3's default CRC-64/NVME; an MD5 upload's object gets the default CRC-64/NVME too
/// (its composite MD5 is not kept).
extension StoredUpload {
    /// The algorithms S3 takes in `x-amz-checksum-algorithm` (its API reference's `Part`, `CompletedPart` and
    /// `ObjectPart`, and the SDKs' `ChecksumAlgorithm`).
    static let algorithms = [
        "CRC32", "CRC32C", "CRC64NVME", "SHA1", "SHA256", "MD5", "SHA512", "XXHASH64", "XXHASH3", "XXHASH128",
    ]

    /// The algorithms S3 takes with `x-amz-checksum-type: FULL_OBJECT`: the CRCs, whose parts' values combine into
    /// the whole object's (S3's user guide: full-object checksums are only available for CRC-based checksums).
    static let fullObjectAlgorithms: Set = ["CRC32", "CRC32C", "CRC64NVME"]

    /// The algorithm and type CreateMultipartUpload's headers ask for, refused as S3 refuses them: a type without an
    /// algorithm, an unknown algorithm or type, a composite CRC-64/NVME or a full-object digest (SHA, MD5, XXHash).
    /// The type defaults to `FULL_OBJECT` for CRC-64/NVME (it has no other) and to `COMPOSITE` for the rest.
    static func checksumSetting(_ request: S3Request) throws(S3Error) -> (algorithm: String?, type: String?) {
        let type = request.header("x-amz-checksum-type")?.uppercased()
        guard let algorithm = request.header("x-amz-checksum-algorithm")?.uppercased() else {
            guard type == nil else {
                throw S3Error(
                    .invalidRequest,
                    "The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header.")
            }
            return (nil, nil)
        }
        guard algorithms.contains(algorithm) else {
            throw S3Error(
                .invalidRequest,
                "Checksum algorithm provided is unsupported. Please try again with any of the valid types: ["
                    + algorithms.joined(separator: ", ") + "]")
        }
        let chosen = type ?? (algorithm == "CRC64NVME" ? "FULL_OBJECT" : "COMPOSITE")
        guard chosen == "COMPOSITE" || chosen == "FULL_OBJECT" else {
            throw S3Error(.invalidRequest, "Value for x-amz-checksum-type header is invalid.")
        }
        if (chosen == "COMPOSITE" && algorithm == "CRC64NVME")
            || (chosen == "FULL_OBJECT" && !fullObjectAlgorithms.contains(algorithm))
        {
            throw S3Error(
                .invalidRequest,
                "The \(chosen) checksum type cannot be used with the \(algorithm.lowercased()) checksum algorithm.")
        }
        return (algorithm, chosen)
    }

    /// `COMPOSITE` or `FULL_OBJECT` for an upload started with an algorithm; `nil` for one started without (S3's
    /// "null" mode, whose object gets the default CRC-64/NVME).
    var checksumMode: String? { checksumAlgorithm == nil ? nil : checksumType ?? "COMPOSITE" }

    /// The algorithm an UploadPart (or any upload) declares: by a checksum header, by a trailer `x-amz-trailer`
    /// announces, or by `x-amz-sdk-checksum-algorithm`; uppercased.
    static func declaredAlgorithm(_ request: S3Request) -> String? {
        if let sent = algorithms.first(where: { request.header("x-amz-checksum-" + $0.lowercased()) != nil }) {
            return sent
        }
        let trailers = (request.header("x-amz-trailer") ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        if let trailed = algorithms.first(where: { trailers.contains("x-amz-checksum-" + $0.lowercased()) }) {
            return trailed
        }
        return request.header("x-amz-sdk-checksum-algorithm")?.uppercased()
    }

    /// Refuses a part that declares another algorithm than the upload's. A part that declares none is taken (S3's
    /// answer to one is not documented): its checksum is computed here.
    func checkPart(_ request: S3Request) throws(S3Error) {
        guard let checksumAlgorithm, let declared = Self.declaredAlgorithm(request), declared != checksumAlgorithm
        else { return }
        throw S3Error(
            .invalidRequest,
            "Checksum Type mismatch occurred, expected checksum Type: \(checksumAlgorithm.lowercased()), "
                + "actual checksum Type: \(declared.lowercased())")
    }

    /// The checksums a `<Part>` of CompleteMultipartUpload lists (`<ChecksumCRC32>` …), by algorithm.
    static func listedChecksums(_ part: S3XMLNode) -> [(algorithm: String, value: String)] {
        algorithms.compactMap { algorithm in part.child("Checksum" + algorithm).map { (algorithm, $0) } }
    }

    /// Checks the checksums a completion lists for `part` (found, its ETag matching) as S3 does: an upload without an
    /// algorithm takes only the part's default CRC-64/NVME that ListParts answers, echoed back (`InvalidPart` for any
    /// other); a composite one needs its algorithm's for every part (`InvalidRequest`, or `BadDigest` when only
    /// another algorithm's is listed); one listed must be the part's (`InvalidPart`).
    func checkListed(
        _ listed: [(algorithm: String, value: String)], for part: Part, invalidPart: S3Error
    ) throws(S3Error) {
        guard let checksumAlgorithm else {
            if listed.contains(where: { $0.algorithm != "CRC64NVME" || $0.value != part.checksumCRC64NVME }) {
                throw invalidPart
            }
            return
        }
        guard let own = listed.first(where: { $0.algorithm == checksumAlgorithm }) else {
            guard checksumMode == "COMPOSITE" else { return }
            if let other = listed.first {
                throw S3Error(
                    .badDigest,
                    "The \(other.algorithm.lowercased()) you specified for part \(part.number) did not match what we "
                        + "received.")
            }
            throw S3Error(
                .invalidRequest,
                "The upload was created using a \(checksumAlgorithm.lowercased()) checksum. The complete request must "
                    + "include the checksum for each part. It was missing for part \(part.number) in the request.")
        }
        if let stored = storedChecksum(part), own.value != stored { throw invalidPart }
    }

    /// The algorithm and value of the checksum ListParts answers for `part`: its upload's algorithm's, or for an
    /// upload started without one S3's default CRC-64/NVME (as S3's `Part` documents it).
    func listedChecksum(_ part: Part) -> (algorithm: String, value: String)? {
        guard let checksumAlgorithm else { return part.checksumCRC64NVME.map { ("CRC64NVME", $0) } }
        return storedChecksum(part).map { (checksumAlgorithm, $0) }
    }

    /// The part's checksum of the upload's algorithm, when the emulator computes that algorithm (a part's MD5 is its
    /// ETag).
    func storedChecksum(_ part: Part) -> String? {
        switch checksumAlgorithm {
        case "CRC32": part.checksumCRC32
        case "CRC64NVME": part.checksumCRC64NVME
        case "MD5": Bytes.unhex(part.etag).map { Data($0).base64EncodedString() }
        default: nil
        }
    }

    /// The whole object's checksum a completion sends as a header, checked as S3 checks it before the parts are
    /// joined; the one the joined object's must equal, if any:
    /// - an upload without an algorithm: its `x-amz-checksum-crc64nvme` (the object's default checksum; S3 ignores
    ///   other algorithms' headers here);
    /// - a full-object upload: its algorithm's, which S3 checks only together with `x-amz-checksum-type`
    ///   (`BadDigest` without it);
    /// - a composite upload: its algorithm's is not checked;
    /// - another algorithm's than the upload's: `BadDigest`.
    func completionChecksum(_ request: S3Request) throws(S3Error) -> (algorithm: String, value: String)? {
        let sent = Self.algorithms.compactMap { algorithm in
            request.header("x-amz-checksum-" + algorithm.lowercased()).map { (algorithm: algorithm, value: $0) }
        }
        guard let checksumAlgorithm else { return sent.first { $0.algorithm == "CRC64NVME" } }
        let mismatch = Self.badDigest(checksumAlgorithm)
        if sent.contains(where: { $0.algorithm != checksumAlgorithm }) { throw mismatch }
        guard checksumMode == "FULL_OBJECT", let own = sent.first else { return nil }
        guard request.header("x-amz-checksum-type") != nil else { throw mismatch }
        return checksumAlgorithm == "CRC32" || checksumAlgorithm == "CRC64NVME" ? own : nil
    }

    static func badDigest(_ algorithm: String) -> S3Error {
        S3Error(.badDigest, "The \(algorithm.lowercased()) you specified did not match the calculated checksum.")
    }

    /// The object's checksums from its parts' records, with no byte read: the composite CRC-32 (`…-N`) of a
    /// composite CRC32 upload, the whole object's CRC-32 of a full-object one; otherwise (S3's default, CRC-64/NVME,
    /// or an algorithm the emulator does not compute) the whole object's CRC-64/NVME, `nil` when a part's record
    /// predates them (then computed over the joined bytes).
    func objectChecksums(_ parts: [Part]) -> (crc32: String?, crc64: CRC64NVME?) {
        if checksumAlgorithm == "CRC32" {
            let crcs = parts.map { CRC32(base64: $0.checksumCRC32 ?? "") ?? CRC32() }
            guard checksumMode == "FULL_OBJECT" else { return (CRC32.composite(crcs), nil) }
            var whole = CRC32()
            for (part, crc) in zip(parts, crcs) { whole = CRC32.combine(whole, crc, part.size) }
            return (whole.base64, nil)
        }
        var whole = CRC64NVME()
        for part in parts {
            guard let text = part.checksumCRC64NVME, let crc = CRC64NVME(base64: text) else { return (nil, nil) }
            whole = CRC64NVME.combine(whole, crc, part.size)
        }
        return (nil, whole)
    }

    /// Refuses a completion whose full-object checksum is not the joined object's.
    static func verify(
        _ expected: (algorithm: String, value: String)?, crc32: String?, crc64: CRC64NVME?
    ) throws(S3Error) {
        guard let expected else { return }
        let actual = expected.algorithm == "CRC32" ? crc32 : crc64?.base64
        if actual != expected.value { throw badDigest(expected.algorithm) }
    }
}
