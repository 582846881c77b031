extension LatchkeyError: CustomStringConvertible {
    /// The message, followed by the failing C function where there is one.
    public var description: String {
        guard let cFunction else { return message }
        return "\(message) (\(cFunction))"
    }
}
