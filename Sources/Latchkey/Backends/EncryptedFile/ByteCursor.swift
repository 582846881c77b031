/// Reads little-endian integers and byte runs from a buffer, front to back,
/// returning nil instead of reading past its end. Used by the vault decoders,
/// which see untrusted bytes.
struct ByteCursor {
    private let bytes: UnsafeRawBufferPointer
    private(set) var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// A cursor at `offset` (at most `bytes.count`).
    init(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        precondition((0...bytes.count).contains(offset), "cursor offset outside the buffer")
        self.bytes = bytes
        self.offset = offset
    }

    /// The number of bytes not read yet.
    var remaining: Int { bytes.count - offset }

    /// The next `count` bytes, or nil when fewer remain.
    mutating func take(_ count: Int) -> UnsafeRawBufferPointer? {
        guard count >= 0, count <= remaining else { return nil }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
    }

    mutating func uint8() -> UInt8? { integer(UInt8.self) }
    mutating func uint16() -> UInt16? { integer(UInt16.self) }
    mutating func uint32() -> UInt32? { integer(UInt32.self) }
    mutating func uint64() -> UInt64? { integer(UInt64.self) }

    private mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
        guard let raw = take(MemoryLayout<T>.size) else { return nil }
        return T(littleEndian: raw.loadUnaligned(as: T.self))
    }
}
