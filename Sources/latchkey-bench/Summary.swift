/// The distribution of one measurement's samples, in seconds per operation.
struct Summary: Codable {
    var samples: Int
    var median: Double
    var p10: Double
    var p90: Double
    var min: Double
    var max: Double

    /// Summarises per-operation times (each sample already divided by its batch size).
    init(_ values: [Double]) {
        precondition(!values.isEmpty, "a measurement needs at least one sample")
        let sorted = values.sorted()
        func rank(_ fraction: Double) -> Double {
            // Linear interpolation between closest ranks.
            let position = fraction * Double(sorted.count - 1)
            let low = Int(position.rounded(.down))
            let high = Swift.min(low + 1, sorted.count - 1)
            return sorted[low] + (sorted[high] - sorted[low]) * (position - Double(low))
        }
        samples = sorted.count
        median = rank(0.5)
        p10 = rank(0.1)
        p90 = rank(0.9)
        min = sorted[0]
        max = sorted[sorted.count - 1]
    }
}

/// Times closures with the monotonic clock.
enum Stopwatch {
    private static let clock = ContinuousClock()

    /// What `body` returns, and the seconds it took.
    static func timed<Result>(_ body: () throws -> Result) rethrows -> (Result, Double) {
        let start = clock.now
        let result = try body()
        return (result, (clock.now - start).seconds)
    }

    /// `count` samples of `body`, each the time of `batch` calls divided by `batch`,
    /// after `warmup` untimed calls. `between` runs untimed after each sample.
    static func sample(
        _ count: Int, batch: Int = 1, warmup: Int = 1,
        _ body: () throws -> Void, between: () throws -> Void = {}
    ) rethrows -> Summary {
        for _ in 0..<warmup {
            try body()
            try between()
        }
        var values: [Double] = []
        values.reserveCapacity(count)
        for _ in 0..<count {
            let (_, elapsed) = try timed { for _ in 0..<batch { try body() } }
            values.append(elapsed / Double(batch))
            try between()
        }
        return Summary(values)
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
