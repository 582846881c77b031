import Latchkey

/// The encrypted-file backend in-process, with the key already derived (key-file
/// source), at several vault sizes; and, in the same run and directory, the
/// physical floors it is compared with.
struct FileBackendSection {
    let directory: String
    let sizes: [Int]
    let samples: Int

    static let section = "file backend (key file, in-process)"
    static let appID = "com.example.bench"

    func run(into report: inout Report) throws {
        report.notes.append(
            "file backend: key-file source, so no KDF runs per operation; values are random base64url text of 64-200 bytes (token-sized), accounts user<i mod 50>@example.com, names token-<i>, kind session"
        )
        report.notes.append(
            "read = a read on an open backend (it checks the file's header and nonce with one open+fstat+pread, then serves the decrypted table); read, fresh instance = a new backend's first read (reads the key file, decrypts and decodes the whole vault)"
        )
        for size in sizes {
            try measure(entries: size, into: &report)
        }
    }

    private func measure(entries count: Int, into report: inout Report) throws {
        let store = "\(directory)/file-\(count)"
        let backend = EncryptedFileBackend(appID: try AppID(Self.appID), directory: store, keySource: .keyFile)
        var keys: [ItemKey] = []
        var items: [ItemKey: StoredItem] = [:]
        for index in 0..<count {
            let key = ItemKey(kind: .session, account: "user\(index % 50)@example.com", name: "token-\(index)")
            keys.append(key)
            items[key] = StoredItem(value: Self.token(), expires: nil)
        }
        try backend.write(contentsOf: items)
        guard let vaultSize = try BenchmarkProbe.fileSize(backend.vaultPath) else {
            throw LatchkeyError(.internal, "the vault was not created")
        }
        let label = "\(count.formatted) entries"
        let sizeText = "\(vaultSize.formatted) B"
        let section = "\(Self.section), \(label), vault \(sizeText)"
        var random = SystemRandomNumberGenerator()

        // Floors first, at the vault's size, in the same directory.
        let floorPath = "\(store)/floor.bin"
        let floorBytes = [UInt8](repeating: 0xA5, count: vaultSize)
        let replaceName = "floor: write+fsync+rename+fsync dir, \(sizeText)"
        report.add(
            section, replaceName,
            try Stopwatch.sample(samples) {
                try BenchmarkProbe.durablyReplace(floorPath, with: floorBytes)
            })
        let aead = BenchmarkProbe.AEAD(size: vaultSize)
        let batch = max(1, min(200, 200_000 / max(1, vaultSize)))
        let sealName = "floor: XChaCha20-Poly1305 seal, \(sizeText)"
        let openName = "floor: XChaCha20-Poly1305 open, \(sizeText)"
        report.add(section, sealName, try Stopwatch.sample(samples, batch: batch) { aead.seal() })
        report.add(section, openName, try Stopwatch.sample(samples, batch: batch) { precondition(aead.open()) })
        let replaceFloor = report.find(section, replaceName)!
        let openFloor = report.find(section, openName)!

        // Reads on the open backend.
        let read = try Stopwatch.sample(samples, batch: 1_000) {
            guard try backend.read(keys.randomElement(using: &random)!) != nil else {
                throw LatchkeyError(.internal, "a stored entry was not found")
            }
        }
        report.add(
            Self.compare(
                Measurement(section: section, name: "read", summary: read),
                with: openFloor,
                target: count == 10_000 ? ("<= 20 us", read.median <= 20e-6) : nil))
        let fresh = try Stopwatch.sample(samples) {
            let opened = EncryptedFileBackend(appID: backend.appID, directory: store, keySource: .keyFile)
            guard try opened.read(keys.randomElement(using: &random)!) != nil else {
                throw LatchkeyError(.internal, "a stored entry was not found")
            }
        }
        report.add(
            Self.compare(
                Measurement(section: section, name: "read, fresh instance", summary: fresh), with: openFloor,
                target: nil))

        // Durable writes replacing an existing entry (the vault keeps its size).
        let write = try Stopwatch.sample(samples) {
            try backend.write(StoredItem(value: Self.token()), for: keys.randomElement(using: &random)!)
        }
        let writeTarget: (String, Double)? =
            switch count {
            case 10: ("<= 1.5x floor", 1.5)
            case 10_000: ("<= 3x floor", 3)
            default: nil
            }
        let writeMeasurement = Self.compare(
            Measurement(section: section, name: "write (durable)", summary: write), with: replaceFloor, target: nil)
        report.add(Self.withRatioTarget(writeMeasurement, writeTarget))

        // Deletes of an existing entry; it is written back, untimed, after each sample.
        var victim = keys[0]
        let delete = try Stopwatch.sample(
            samples,
            {
                victim = keys.randomElement(using: &random)!
                try backend.delete(victim)
            },
            between: {
                try backend.write(items[victim]!, for: victim)
            })
        report.add(
            Self.compare(
                Measurement(section: section, name: "delete (durable)", summary: delete), with: replaceFloor,
                target: nil))
        try backend.deleteAll()
    }

    /// `measurement` with its ratio to `floor`, and a target on its absolute median.
    static func compare(_ measurement: Measurement, with floor: Measurement, target: (String, Bool)?) -> Measurement {
        var result = measurement
        result.floor = floor.name
        result.ratioToFloor = measurement.summary.median / floor.summary.median
        if let target {
            result.target = target.0
            result.targetMet = target.1
        }
        return result
    }

    /// `measurement` with a target on its ratio to the floor.
    static func withRatioTarget(_ measurement: Measurement, _ target: (String, Double)?) -> Measurement {
        guard let target, let ratio = measurement.ratioToFloor else { return measurement }
        var result = measurement
        result.target = target.0
        result.targetMet = ratio <= target.1
        return result
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// A token-sized value: 64 to 200 random base64url characters.
    static func token() -> SecretBytes {
        var random = SystemRandomNumberGenerator()
        let length = Int.random(in: 64...200, using: &random)
        return SecretBytes((0..<length).map { _ in alphabet.randomElement(using: &random)! })
    }
}

extension Int {
    /// With thousands separators: 10,000.
    var formatted: String {
        let digits = Array(String(self))
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return out
    }
}
