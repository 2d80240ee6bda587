/// A `Range: bytes=…` header read against an object's size, as S3 reads it: one range (`first-last`,
/// `first-`, or `-suffix`); several ranges or a malformed header are ignored (the whole object is sent), and a
/// range that starts past the end is 416 `InvalidRange`.
enum ByteRange {
    /// The bytes to send (`nil`: the whole object).
    static func resolve(_ header: String?, size: Int64) throws(S3Error) -> ClosedRange<Int64>? {
        guard let header, header.hasPrefix("bytes=") else { return nil }
        let spec = header.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
        let firstText = spec[..<dash]
        let lastText = spec[spec.index(after: dash)...]
        let unsatisfiable = S3Error(
            .invalidRange, "The requested range is not satisfiable",
            details: [("RangeRequested", header), ("ActualObjectSize", String(size))])
        if firstText.isEmpty {
            guard let suffix = Int64(lastText), suffix >= 0 else { return nil }
            guard suffix > 0, size > 0 else { throw unsatisfiable }
            return max(0, size - suffix)...(size - 1)
        }
        guard let first = Int64(firstText), first >= 0 else { return nil }
        let last: Int64
        if lastText.isEmpty {
            last = size - 1
        } else {
            guard let value = Int64(lastText), value >= first else { return nil }
            last = min(value, size - 1)
        }
        guard first < size else { throw unsatisfiable }
        return first...last
    }
}
