import Foundation
import GQLCore

extension GQLError.Code {
    /// A value to store nests deeper than the cache's records can hold (``RecordCodec/maximumDepth`` levels);
    /// nothing of that answer was stored.
    public static let recordTooDeep = GQLError.Code("recordTooDeep")
}

/// The binary form of a record's fields in the `fields` column (a BLOB): what a cold read decodes instead of
/// parsing JSON, and a write encodes instead of printing it.
///
/// A format byte (1), then the fields as an object, each value a tag byte and its payload: null, false, true;
/// an integer as a zigzag varint; a double as its 8 bytes (IEEE 754, little-endian); a string or data as a varint
/// byte count and the bytes (UTF-8 for strings); an array as a varint count and its values; an object as a varint
/// count and, per member, its name (a varint byte count and UTF-8) and value, in the object's order; a reference
/// (`{"__ref": key}`, see ``StoredValue``) as its key, like a string. Decoding checks every count against the
/// bytes left and nesting against ``maximumDepth``, so a damaged row is refused (read as a miss), never a crash.
///
/// Rows written before this format (JSON text, migration step 3 converts them) still read through the JSON
/// parser: the column's storage class tells the two apart.
///
/// Encoding refuses what decoding would refuse: a value nested ``maximumDepth`` levels or deeper throws
/// ``GQLError`` `.recordTooDeep` before a byte is stored, so no row is ever written that cannot be read back.
package enum RecordCodec {
    static let format: UInt8 = 1
    /// Deeper nesting than any record the normalizer writes (a leaf list of lists, a wrapped object leaf) needs.
    package static let maximumDepth = 512

    private enum Tag: UInt8 {
        case null = 0, `false`, `true`, int, double, string, data, array, object, reference
    }

    // MARK: Encoding

    /// The bytes of `fields`, the record `key` (named in the error).
    ///
    /// - Throws: ``GQLError`` `.recordTooDeep` naming the record and its field when a value nests ``maximumDepth``
    ///   levels or deeper (decoding would refuse it).
    package static func encode(_ fields: GQLValues, key: String) throws -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 + fields.count * 24)
        out.append(format)
        writeCount(fields.count, into: &out)
        for (name, value) in fields {
            writeBytes(of: name, into: &out)
            guard write(value, depth: 1, into: &out) else {
                throw GQLError(
                    .recordTooDeep,
                    "field \(name) of record \(key) nests \(maximumDepth) levels or deeper; the cache stores records "
                        + "up to \(maximumDepth - 1) levels, so it was not stored", operation: "cache")
            }
        }
        return out
    }

    /// Writes the members of an object at `depth`; `false` (the output then half written) when one nests too deep.
    private static func writeMembers(_ members: GQLValues, depth: Int, into out: inout [UInt8]) -> Bool {
        // Decoding reads an object's members at its own depth, its values one deeper: the same limits here.
        guard depth < maximumDepth else { return false }
        writeCount(members.count, into: &out)
        for (name, value) in members {
            writeBytes(of: name, into: &out)
            guard write(value, depth: depth + 1, into: &out) else { return false }
        }
        return true
    }

    /// Writes `value`, found at `depth` (a record's fields are at 1); `false` when it nests too deep.
    private static func write(_ value: GQLValue, depth: Int, into out: inout [UInt8]) -> Bool {
        switch value {
        case .null: out.append(Tag.null.rawValue)
        case .bool(let flag): out.append(flag ? Tag.true.rawValue : Tag.false.rawValue)
        case .int(let number):
            out.append(Tag.int.rawValue)
            writeVarint(UInt64(bitPattern: (number << 1) ^ (number >> 63)), into: &out)
        case .double(let number):
            out.append(Tag.double.rawValue)
            var bits = number.bitPattern.littleEndian
            withUnsafeBytes(of: &bits) { out.append(contentsOf: $0) }
        case .string(let text):
            out.append(Tag.string.rawValue)
            writeBytes(of: text, into: &out)
        case .data(let bytes):
            out.append(Tag.data.rawValue)
            writeCount(bytes.count, into: &out)
            out.append(contentsOf: bytes)
        case .array(let elements):
            guard depth < maximumDepth else { return false }
            out.append(Tag.array.rawValue)
            writeCount(elements.count, into: &out)
            for element in elements {
                guard write(element, depth: depth + 1, into: &out) else { return false }
            }
        case .object(let members):
            if members.count == 1, let key = StoredValue.referencedKey(value) {
                out.append(Tag.reference.rawValue)
                writeBytes(of: key, into: &out)
            } else {
                out.append(Tag.object.rawValue)
                return writeMembers(members, depth: depth, into: &out)
            }
        }
        return true
    }

    private static func writeBytes(of text: String, into out: inout [UInt8]) {
        let utf8 = text.utf8
        writeCount(utf8.count, into: &out)
        if utf8.withContiguousStorageIfAvailable({ out.append(contentsOf: $0) }) == nil {
            out.append(contentsOf: utf8)
        }
    }

    private static func writeCount(_ count: Int, into out: inout [UInt8]) {
        writeVarint(UInt64(count), into: &out)
    }

    private static func writeVarint(_ value: UInt64, into out: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        out.append(UInt8(rest))
    }

    // MARK: Decoding

    /// The fields in `bytes`; `nil` when they are not a record of this format (damaged, cut short, another
    /// format).
    package static func decode(_ bytes: UnsafeRawBufferPointer) -> GQLValues? {
        decode(bytes, noting: "").map(\.fields)
    }

    /// The fields in `bytes`, and whether they have a member named `name` (seen while decoding, not looked up).
    static func decode(_ bytes: UnsafeRawBufferPointer, noting name: String)
        -> (fields: GQLValues, hasNoted: Bool)?
    {
        var names = Names()
        return decode(bytes, noting: name, names: &names)
    }

    /// ``decode(_:noting:)`` with the member names of the records decoded before (pass the same `names` for
    /// records read one after another).
    static func decode(_ bytes: UnsafeRawBufferPointer, noting name: String, names: inout Names)
        -> (fields: GQLValues, hasNoted: Bool)?
    {
        var reader = Reader(bytes: bytes, noted: name, names: names)
        names = Names()  // the reader holds the only reference while it reads: no copy when a name changes
        defer { names = reader.names }
        guard reader.byte() == format, let fields = reader.members(depth: 0), reader.isAtEnd else { return nil }
        return (fields, reader.sawNoted)
    }

    /// The top-level member names of the last record decoded, by position. Records of one type, read one after
    /// another (a level of a cold read comes back in key order, so type by type), spell the same names in the
    /// same places: each name is compared with the one before at its place and shared when equal, rather than
    /// made and checked as UTF-8 again.
    struct Names {
        fileprivate var byPosition: [String] = []
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        /// A top-level member name to watch for.
        let noted: String
        var sawNoted = false
        var offset = 0
        var names: Names

        init(bytes: UnsafeRawBufferPointer, noted: String, names: Names) {
            self.bytes = bytes
            self.noted = noted
            self.names = names
        }

        var isAtEnd: Bool { offset == bytes.count }

        mutating func byte() -> UInt8? {
            guard offset < bytes.count else { return nil }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func varint() -> UInt64? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while let byte = byte() {
                guard shift < 64 else { return nil }
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
            return nil
        }

        /// A count no greater than the bytes left (every element takes at least one byte).
        mutating func count() -> Int? {
            guard let count = varint(), count <= UInt64(bytes.count - offset) else { return nil }
            return Int(count)
        }

        mutating func slice() -> UnsafeRawBufferPointer? {
            guard let count = count() else { return nil }
            defer { offset += count }
            return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
        }

        mutating func string() -> String? {
            // Typed as bytes, so the standard library's UTF-8 fast path takes it (not its generic one).
            slice().map { String(decoding: $0.assumingMemoryBound(to: UInt8.self), as: UTF8.self) }
        }

        /// A top-level member's name at `position`: the previous record's name there when the bytes spell it.
        mutating func name(at position: Int) -> String? {
            guard let slice = slice() else { return nil }
            if position < names.byPosition.count,
                names.byPosition[position].utf8.withContiguousStorageIfAvailable({ known in
                    guard known.count == slice.count else { return false }
                    guard let start = known.baseAddress, let other = slice.baseAddress else { return slice.isEmpty }
                    return memcmp(start, other, slice.count) == 0
                }) == true
            {
                return names.byPosition[position]
            }
            let name = String(decoding: slice.assumingMemoryBound(to: UInt8.self), as: UTF8.self)
            if position < names.byPosition.count {
                names.byPosition[position] = name
            } else if position == names.byPosition.count {
                names.byPosition.append(name)
            }
            return name
        }

        mutating func members(depth: Int) -> GQLValues? {
            guard depth < RecordCodec.maximumDepth, let count = count() else { return nil }
            var members: [GQLValues.Element] = []
            members.reserveCapacity(count)
            for position in 0..<count {
                guard let name = depth == 0 ? name(at: position) : string(), let value = value(depth: depth + 1)
                else { return nil }
                if depth == 0, !sawNoted, name == noted { sawNoted = true }
                members.append((name, value))
            }
            // Names are unique as written (from a GQLValues); not looked up again here, as a damaged row with a
            // repeated name at worst reads one of that name's values.
            return GQLValues(uniqueMembers: members)
        }

        mutating func value(depth: Int) -> GQLValue? {
            guard let raw = byte(), let tag = Tag(rawValue: raw) else { return nil }
            switch tag {
            case .null: return .null
            case .false: return .bool(false)
            case .true: return .bool(true)
            case .int:
                guard let bits = varint() else { return nil }
                return .int(Int64(bitPattern: bits >> 1) ^ -Int64(bitPattern: bits & 1))
            case .double:
                guard bytes.count - offset >= 8 else { return nil }
                var bits: UInt64 = 0
                withUnsafeMutableBytes(of: &bits) {
                    $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + 8]))
                }
                offset += 8
                return .double(Double(bitPattern: UInt64(littleEndian: bits)))
            case .string: return string().map { .string($0) }
            case .data: return slice().map { .data(Data($0)) }
            case .reference: return string().map { StoredValue.reference($0) }
            case .array:
                guard depth < RecordCodec.maximumDepth, let count = count() else { return nil }
                var elements: [GQLValue] = []
                elements.reserveCapacity(count)
                for _ in 0..<count {
                    guard let element = value(depth: depth + 1) else { return nil }
                    elements.append(element)
                }
                return .array(elements)
            case .object: return members(depth: depth).map { .object($0) }
            }
        }
    }
}
