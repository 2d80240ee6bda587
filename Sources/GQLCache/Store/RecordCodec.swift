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
        var bytes: [UInt8] = []
        _ = try encode(fields, key: key, into: &bytes)
        return bytes  // a new buffer is made exactly as large as the bytes
    }

    /// Writes the bytes of `fields`, the record `key`, at the start of `buffer` and returns how many there are.
    /// `buffer` grows when it is too small and never shrinks, so one buffer serves a write's records one after
    /// another without an allocation per record; what lies past the count returned is left from earlier ones.
    ///
    /// The size is worked out first (checking the depth), then the bytes are written in place: no growing
    /// buffer checked byte by byte, each string's UTF-8 copied in one go.
    ///
    /// - Throws: ``GQLError`` `.recordTooDeep` naming the record and its field when a value nests ``maximumDepth``
    ///   levels or deeper (decoding would refuse it); `buffer` may then hold anything.
    package static func encode(_ fields: GQLValues, key: String, into buffer: inout [UInt8]) throws -> Int {
        var size = 1 + varintSize(UInt64(fields.count))
        for (name, value) in fields {
            guard let valueSize = encodedSize(value, depth: 1) else {
                throw GQLError(
                    .recordTooDeep,
                    "field \(name) of record \(key) nests \(maximumDepth) levels or deeper; the cache stores records "
                        + "up to \(maximumDepth - 1) levels, so it was not stored", operation: "cache")
            }
            size += bytesSize(name.utf8.count) + valueSize
        }
        if buffer.count < size { buffer.append(contentsOf: repeatElement(0, count: size - buffer.count)) }
        buffer.withUnsafeMutableBufferPointer { out in
            guard let start = out.baseAddress else { return }  // never: size is at least 2
            var writer = Writer(next: start)
            writer.byte(format)
            writer.varint(UInt64(fields.count))
            for (name, value) in fields {
                writer.bytes(of: name)
                writer.value(value)
            }
        }
        return size
    }

    /// The bytes `value` takes at `depth` (a record's fields are at 1); `nil` when it nests too deep. It mirrors
    /// ``Writer/value(_:)`` and the decoder's limits: an array or an object (not a reference) at `depth` must
    /// be below ``maximumDepth``, its elements or members' values one deeper.
    private static func encodedSize(_ value: GQLValue, depth: Int) -> Int? {
        switch value {
        case .null, .bool: return 1
        case .int(let number): return 1 + varintSize(zigzag(number))
        case .double: return 9
        case .string(let text): return 1 + bytesSize(text.utf8.count)
        case .data(let bytes): return 1 + bytesSize(bytes.count)
        case .array(let elements):
            guard depth < maximumDepth else { return nil }
            var size = 1 + varintSize(UInt64(elements.count))
            for element in elements {
                guard let elementSize = encodedSize(element, depth: depth + 1) else { return nil }
                size += elementSize
            }
            return size
        case .object(let members):
            if members.count == 1, let key = StoredValue.referencedKey(value) { return 1 + bytesSize(key.utf8.count) }
            guard depth < maximumDepth else { return nil }
            var size = 1 + varintSize(UInt64(members.count))
            for (name, member) in members {
                guard let memberSize = encodedSize(member, depth: depth + 1) else { return nil }
                size += bytesSize(name.utf8.count) + memberSize
            }
            return size
        }
    }

    /// The bytes of a byte count and that many bytes.
    private static func bytesSize(_ count: Int) -> Int { varintSize(UInt64(count)) + count }

    private static func varintSize(_ value: UInt64) -> Int {
        // 7 bits a byte: 1 byte up to 127, 10 bytes for the largest values.
        let bits = 64 - value.leadingZeroBitCount
        return bits == 0 ? 1 : (bits + 6) / 7
    }

    private static func zigzag(_ number: Int64) -> UInt64 { UInt64(bitPattern: (number << 1) ^ (number >> 63)) }

    /// Writes into memory sized by ``encodedSize(_:depth:)`` (so it checks neither room nor depth).
    private struct Writer {
        var next: UnsafeMutablePointer<UInt8>

        mutating func byte(_ value: UInt8) {
            next.pointee = value
            next += 1
        }

        mutating func varint(_ value: UInt64) {
            var rest = value
            while rest >= 0x80 {
                byte(UInt8(truncatingIfNeeded: rest) | 0x80)
                rest >>= 7
            }
            byte(UInt8(rest))
        }

        mutating func bytes(_ source: UnsafeRawBufferPointer) {
            varint(UInt64(source.count))
            guard let base = source.baseAddress, !source.isEmpty else { return }
            UnsafeMutableRawPointer(next).copyMemory(from: base, byteCount: source.count)
            next += source.count
        }

        mutating func bytes(of text: String) {
            var text = text  // withUTF8 is mutating (it would make a non-native string native); no copy here
            text.withUTF8 { bytes(UnsafeRawBufferPointer($0)) }
        }

        mutating func value(_ value: GQLValue) {
            switch value {
            case .null: byte(Tag.null.rawValue)
            case .bool(let flag): byte(flag ? Tag.true.rawValue : Tag.false.rawValue)
            case .int(let number):
                byte(Tag.int.rawValue)
                varint(zigzag(number))
            case .double(let number):
                byte(Tag.double.rawValue)
                let bits = number.bitPattern
                for shift in stride(from: 0, to: 64, by: 8) { byte(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
            case .string(let text):
                byte(Tag.string.rawValue)
                bytes(of: text)
            case .data(let data):
                byte(Tag.data.rawValue)
                data.withUnsafeBytes { bytes($0) }
            case .array(let elements):
                byte(Tag.array.rawValue)
                varint(UInt64(elements.count))
                for element in elements { self.value(element) }
            case .object(let members):
                if members.count == 1, let key = StoredValue.referencedKey(value) {
                    byte(Tag.reference.rawValue)
                    bytes(of: key)
                } else {
                    byte(Tag.object.rawValue)
                    varint(UInt64(members.count))
                    for (name, member) in members {
                        bytes(of: name)
                        self.value(member)
                    }
                }
            }
        }
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

        @inline(__always)
        mutating func byte() -> UInt8? {
            guard offset < bytes.count else { return nil }
            defer { offset += 1 }
            return bytes[offset]
        }

        @inline(__always)
        mutating func varint() -> UInt64? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while let byte = byte() {
                // The tenth byte holds the 64th bit alone: more is a damaged row, refused (not cut off).
                guard shift < 63 || byte <= 1 else { return nil }
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
            return nil
        }

        /// A count no greater than the bytes left (every element takes at least one byte).
        @inline(__always)
        mutating func count() -> Int? {
            guard let count = varint(), count <= UInt64(bytes.count - offset) else { return nil }
            return Int(count)
        }

        @inline(__always)
        mutating func slice() -> UnsafeRawBufferPointer? {
            guard let count = count() else { return nil }
            defer { offset += count }
            return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
        }

        @inline(__always)
        mutating func string() -> String? {
            slice().flatMap(Self.text)
        }

        /// The bytes as a string, nil when they are not UTF-8 (a damaged row is refused, never repaired).
        @inline(__always)
        static func text(_ slice: UnsafeRawBufferPointer) -> String? {
            // Typed as bytes, so the standard library's UTF-8 fast path takes it (not its generic one); plain ASCII
            // is valid as it stands, so only bytes above it are validated.
            let bytes = slice.assumingMemoryBound(to: UInt8.self)
            var high: UInt8 = 0
            for byte in bytes { high |= byte }
            return high < 0x80 ? String(decoding: bytes, as: UTF8.self) : String(validating: bytes, as: UTF8.self)
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
            guard let name = Self.text(slice) else { return nil }
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
