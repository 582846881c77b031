extension LoginLanguage {
    /// The English texts: complete, and the fallback for the other tables.
    static let englishTable: [MessageKey: String] = [
        .usernameLabel: "Username",
        .passwordLabel: "Password",
        .logInButton: "Log in",
        .rememberUsernameLabel: "Remember username",
        .signedInAs: "Signed in as {account}.",
        .logOutButton: "Log out",
        .loggingIn: "Logging in…",
        .retryCountdown: "You can try again in {seconds} s.",
        .invalidCredentials: "The username or password is incorrect.",
        .accountLocked: "This account is locked. Contact your administrator or try again later.",
        .rateLimited: "Too many attempts. Please wait before trying again.",
        .networkUnreachable: "The server cannot be reached. Check your network connection.",
        .timedOut: "The server took too long to answer. Please try again.",
        .serverError: "The server ran into a problem. Please try again later.",
        .malformedResponse: "The server's answer could not be understood. Please try again later.",
        .sessionNotSaved:
            "You are logged in, but the session could not be saved on this device. You will have to log in again next time.",
    ]
}
