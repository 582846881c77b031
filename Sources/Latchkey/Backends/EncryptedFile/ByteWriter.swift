/// Writes little-endian integers and byte runs into a buffer of a size computed
/// beforehand, front to back. Writing past the end is a programming error.
struct ByteWriter {
    private let bytes: UnsafeMutableRawBufferPointer
    private(set) var offset = 0

    init(_ bytes: UnsafeMutableRawBufferPointer) {
        self.bytes = bytes
    }

    mutating func write<T: FixedWidthInteger>(_ value: T) {
        precondition(offset + MemoryLayout<T>.size <= bytes.count, "vault encoder overran its buffer")
        bytes.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
        offset += MemoryLayout<T>.size
    }

    mutating func write(_ run: UnsafeRawBufferPointer) {
        precondition(offset + run.count <= bytes.count, "vault encoder overran its buffer")
        guard let source = run.baseAddress, run.count > 0 else { return }
        (bytes.baseAddress! + offset).copyMemory(from: source, byteCount: run.count)
        offset += run.count
    }

    mutating func write(utf8 string: String) {
        var copy = string
        copy.withUTF8 { write(UnsafeRawBufferPointer($0)) }
    }
}
