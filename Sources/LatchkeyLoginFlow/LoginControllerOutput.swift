/// What a ``LoginController`` tells its UI.
public enum LoginControllerOutput: Sendable {
    /// The state changed: render it.
    case render(Login.State)
    /// Move the keyboard focus to this field.
    case focus(Login.Field)
    /// A credential-store call failed. The screen's state is unaffected,
    /// except that a failed session save also arrives as
    /// ``Login/Event/sessionSaveFailed(account:)``.
    case storeFailed(LoginStoreFailure)
}
