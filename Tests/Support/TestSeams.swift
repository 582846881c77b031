import Testing

/// Whether the library was built with its test seams (this target is built with the same setting) (`LATCHKEY_TEST_SEAMS=1`, as `make test`
/// builds it); a plain `swift build --build-tests` has none.
#if LATCHKEY_TEST_SEAMS
    public let testSeamsCompiled = true
#else
    public let testSeamsCompiled = false
#endif

extension Trait where Self == ConditionTrait {
    /// For a test that uses the library's test seams: skipped, saying why, in a build without them.
    public static var needsTestSeams: Self {
        .enabled(
            if: testSeamsCompiled,
            "needs the library's test seams, which only a build with LATCHKEY_TEST_SEAMS=1 has: run make test")
    }
}
