extension SecretBytes: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A redacted placeholder; never the bytes.
    public var description: String { "SecretBytes(<redacted>)" }

    /// A redacted placeholder; never the bytes.
    public var debugDescription: String { description }

    /// A mirror with no children, so `dump` and debuggers show nothing secret.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
