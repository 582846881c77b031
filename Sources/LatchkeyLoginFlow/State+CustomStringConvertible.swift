extension Login.State: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A summary with the password redacted.
    public var description: String {
        let fields = customMirror.children.map { "\($0.label ?? "?"): \($0.value)" }
        return "Login.State(\(fields.joined(separator: ", ")))"
    }

    /// The same summary as ``description``, password redacted.
    public var debugDescription: String { description }

    /// A mirror whose password child is a placeholder, so `dump` and
    /// debuggers never show the password.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "isVisible": isVisible,
                "username": username,
                "password": "<redacted>",
                "remembersUsername": remembersUsername,
                "pendingGeneration": pendingGeneration as Any,
                "lastGeneration": lastGeneration,
                "message": message as Any,
                "signedInAccount": signedInAccount as Any,
                "retryRemaining": retryRemaining as Any,
                "canSubmit": canSubmit,
            ], displayStyle: .struct)
    }
}
