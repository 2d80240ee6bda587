import GQLCore

/// Records copied for the memory layer in the order a read of the answer meets them: each record's members, then
/// its strings, references and lists, then the next record's.
///
/// A warm read waits on memory for about half its time (Docs/Performance.md, the warm read's session of
/// 2026-11-29 04:40 UTC): it follows references from record to record and touches each record's members, each
/// string the answer keeps (a retain: an atomic operation that waits for the string's line) and each reference
/// object, all separate heap objects. As a write hands them over, a record's strings are the parsed answer's,
/// wherever the parser put them among the objects it made (freed after the write), and its members and
/// references are wherever the normalizer's allocations landed among its own. Copied in one pass, in the
/// normalizer's order (the order the answer met its objects, which a read of the same selection follows), they
/// are allocated one after another: a read then walks the heap mostly forward, as a parse walks its bytes, and
/// the processor's prefetchers fetch ahead of it. Only new records the write stored are copied, after the codec
/// took them (so never a value nested deeper than it stores: the copy recurses); a record merged into one the memory
/// layer had, or left as it was, is not. What it gains depends on the allocator's state (a heap fragmented by other
/// work hands out less of one run). Copying only the members, references and lists, and not the
/// strings, did not pay (CacheBench, the same section).
enum ReadOrderCopy {
    /// Longest UTF-8 text a `String` keeps inline (no storage of its own to copy).
    static let inlineBytes = 15

    /// `members` copied: their storage allocated first, then their values in order.
    static func copy(_ members: GQLValues) -> GQLValues {
        var copied: [GQLValues.Element] = []
        copied.reserveCapacity(members.count)
        members.withMembers { stored in
            for member in stored { copied.append((member.key, copy(member.value))) }
        }
        return GQLValues(uniqueMembers: copied)
    }

    /// `value` copied, with its strings (in lists and objects too) in storage of their own.
    static func copy(_ value: GQLValue) -> GQLValue {
        switch value {
        case .string(let text): .string(copy(text))
        case .object(let members): .object(copy(members))
        case .array(let elements): .array(copy(elements))
        default: value
        }
    }

    private static func copy(_ elements: [GQLValue]) -> [GQLValue] {
        var copied: [GQLValue] = []
        copied.reserveCapacity(elements.count)
        for element in elements { copied.append(copy(element)) }
        return copied
    }

    /// `text` in storage of its own (text short enough to be kept inline is returned as it is).
    static func copy(_ text: String) -> String {
        let count = text.utf8.count
        guard count > inlineBytes else { return text }
        var text = text
        return text.withUTF8 { bytes in
            String(unsafeUninitializedCapacity: count) { buffer in
                guard let target = buffer.baseAddress, let source = bytes.baseAddress else { return 0 }
                target.initialize(from: source, count: count)
                return count
            }
        }
    }
}
