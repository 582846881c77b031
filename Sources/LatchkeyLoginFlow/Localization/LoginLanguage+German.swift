extension LoginLanguage {
    /// The German texts.
    static let germanTable: [MessageKey: String] = [
        .usernameLabel: "Benutzername",
        .passwordLabel: "Passwort",
        .logInButton: "Anmelden",
        .rememberUsernameLabel: "Benutzernamen merken",
        .signedInAs: "Angemeldet als {account}.",
        .logOutButton: "Abmelden",
        .loggingIn: "Anmeldung läuft …",
        .retryCountdown: "Sie können es in {seconds} s erneut versuchen.",
        .invalidCredentials: "Benutzername oder Passwort ist falsch.",
        .accountLocked:
            "Dieses Konto ist gesperrt. Wenden Sie sich an Ihre Administration oder versuchen Sie es später erneut.",
        .rateLimited: "Zu viele Versuche. Bitte warten Sie, bevor Sie es erneut versuchen.",
        .networkUnreachable: "Der Server ist nicht erreichbar. Bitte prüfen Sie Ihre Netzwerkverbindung.",
        .timedOut: "Der Server hat nicht rechtzeitig geantwortet. Bitte versuchen Sie es erneut.",
        .serverError: "Auf dem Server ist ein Fehler aufgetreten. Bitte versuchen Sie es später erneut.",
        .malformedResponse: "Die Antwort des Servers war unverständlich. Bitte versuchen Sie es später erneut.",
        .sessionNotSaved:
            "Sie sind angemeldet, aber die Sitzung konnte auf diesem Gerät nicht gespeichert werden. Beim nächsten Mal müssen Sie sich erneut anmelden.",
    ]
}
