/// The version of Latchkey's tools, defined once: what `latchkey --version` prints, and what
/// the agent answers for (a client of another version is declined).
package enum ToolVersion {
    /// The version, such as `0.1.0` (scripts/release reads this line).
    static let version = "0.1.0"

    /// The version, for the command line and the agent.
    package static var current: String { version }
}
