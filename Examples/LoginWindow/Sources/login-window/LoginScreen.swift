import Latchkey
import LatchkeyLoginFlow

/// What the window asks of the controller, in the order the user did it.
enum ScreenCommand: Sendable {
    /// Load the remembered username and show the login form.
    case appear
    /// Feed this event to the reducer.
    case event(Login.Event)
    /// The window is closing: hide, apply the policy's exit rules, quit.
    case close
}

/// The login window: renders a `Login.State`, and turns every widget signal
/// into a `Login.Event`. It decides nothing itself: whether the button is
/// sensitive, the fields editable, the spinner shown or the password kept is
/// what the state says.
@GtkActor
final class LoginScreen {
    private let language: LoginLanguage
    private let send: @Sendable (ScreenCommand) -> Void

    private let window = Window()
    private let content = Box(vertical: true, spacing: 12)
    private let form = Grid(rowSpacing: 8, columnSpacing: 12)
    private let usernameLabel: Label
    private let usernameField = TextField()
    private let passwordLabel: Label
    private let passwordField = PasswordField()
    private let rememberBox: CheckBox
    private let logInButton: Button
    private let progress = Box(vertical: false, spacing: 8)
    private let spinner = Spinner()
    private let progressLabel: Label
    private let messageRow = Box(vertical: false, spacing: 8)
    private let messageIcon = Icon(named: "dialog-error-symbolic")
    private let messageLabel = Label(wraps: true)
    private let countdownLabel = Label(wraps: true)
    private let signedIn = Box(vertical: true, spacing: 12)
    private let signedInLabel = Label(wraps: true)
    private let logOutButton: Button

    /// Signals that GTK emits while this screen renders a state are not user
    /// actions, so they are not turned into events.
    private var rendering = false
    /// Edits sent to the controller that no rendered state has shown yet:
    /// a state older than the user's latest keystrokes must not overwrite them.
    private var unconfirmedUsernames: [String] = []
    private var unconfirmedPasswords: [SecretBytes] = []
    private var wasInFlight = false
    private var wasSignedIn = false
    private var fitScheduled = false

    /// Builds the window (not yet shown).
    /// - Parameters:
    ///   - language: The language of every text.
    ///   - send: Delivers a command to the controller, in order.
    init(language: LoginLanguage, send: @escaping @Sendable (ScreenCommand) -> Void) {
        self.language = language
        self.send = send
        usernameLabel = Label(MessageKey.usernameLabel.text(in: language))
        passwordLabel = Label(MessageKey.passwordLabel.text(in: language))
        rememberBox = CheckBox(label: MessageKey.rememberUsernameLabel.text(in: language))
        logInButton = Button(label: MessageKey.logInButton.text(in: language))
        progressLabel = Label(MessageKey.loggingIn.text(in: language))
        logOutButton = Button(label: MessageKey.logOutButton.text(in: language))
        layOut()
        connectSignals()
        // Until the controller's first state arrives, show the screen before it
        // appears (empty, nothing in flight), so the window is sized for that.
        render(Login.State())
    }

    private func layOut() {
        window.title = MessageKey.logInButton.text(in: language)
        // Labels sit right-aligned against their fields, whatever their length
        // in the language shown; the column grows to the longest label.
        for (row, (label, field)) in [(usernameLabel, usernameField as Widget), (passwordLabel, passwordField)]
            .enumerated()
        {
            label.textAlignment = 1
            label.alignHorizontally(.end)
            label.labels(field)
            field.expandHorizontally()
            form.attach(label, column: 0, row: Int32(row))
            form.attach(field, column: 1, row: Int32(row))
        }
        form.attach(rememberBox, column: 1, row: 2)

        logInButton.alignHorizontally(.end)
        logInButton.addStyleClass("suggested-action")

        spinner.centerVertically()
        progress.append(spinner)
        progress.append(progressLabel)
        progress.alignHorizontally(.center)

        messageIcon.centerVertically()
        messageLabel.textAlignment = 0
        messageLabel.addStyleClass("error")
        messageRow.append(messageIcon)
        messageRow.append(messageLabel)
        countdownLabel.textAlignment = 0

        signedInLabel.textAlignment = 0
        logOutButton.alignHorizontally(.start)
        signedIn.append(signedInLabel)
        signedIn.append(logOutButton)

        content.setMargins(24)
        for widget: Widget in [form, logInButton, progress, messageRow, countdownLabel, signedIn] {
            content.append(widget)
        }
        // The content scrolls when the window is made smaller than it, and the
        // window grows when the content does (a longer message, a longer language).
        window.setChild(ScrolledView(child: content))
    }

    private func connectSignals() {
        usernameField.onChange { [weak self] in
            guard let self, !rendering else { return }
            let text = usernameField.text
            unconfirmedUsernames.append(text)
            send(.event(.usernameChanged(text)))
        }
        passwordField.onChange { [weak self] in
            guard let self, !rendering else { return }
            let secret = passwordField.secret
            unconfirmedPasswords.append(secret)
            send(.event(.passwordChanged(secret)))
        }
        usernameField.onReturn { [weak self] in self?.send(.event(.returnPressed(in: .username))) }
        passwordField.onReturn { [weak self] in self?.send(.event(.returnPressed(in: .password))) }
        passwordField.onEscape { [weak self] in
            // A clear by code, not a keystroke: the field is emptied without an
            // edit event, and the state is told so.
            guard let self else { return }
            rendering = true
            passwordField.clear()
            rendering = false
            unconfirmedPasswords.removeAll()
            send(.event(.passwordCleared))
        }
        rememberBox.onToggle { [weak self] in
            guard let self, !rendering else { return }
            send(.event(.rememberUsernameChanged(rememberBox.isChecked)))
        }
        logInButton.onClick { [weak self] in self?.send(.event(.submitTapped)) }
        logOutButton.onClick { [weak self] in
            self?.send(.event(.logoutRequested))
            self?.send(.appear)
        }
        window.onCloseRequest { [weak self] in self?.send(.close) }
    }

    /// Shows the window.
    func present() {
        window.present()
    }

    /// Closes the window for good.
    func destroy() {
        window.destroy()
    }

    /// Applies what the controller reports.
    /// - Parameter output: A new state, a focus request or a store failure.
    func apply(_ output: LoginControllerOutput) {
        switch output {
        case .render(let state):
            render(state)
        case .focus(let field):
            (field == .username ? usernameField as Widget : passwordField).grabFocus()
        case .storeFailed(let failure):
            // The operation only: a store's error message never holds a secret,
            // but the account it concerns stays out of the log too.
            Log.line("credential store: \(failure.operation) failed (\(type(of: failure.error)))")
        }
    }

    /// Makes every widget show `state`.
    func render(_ state: Login.State) {
        rendering = true
        defer { rendering = false }
        let signedInAccount = state.signedInAccount

        form.isVisible = signedInAccount == nil
        logInButton.isVisible = signedInAccount == nil
        signedIn.isVisible = signedInAccount != nil
        signedInLabel.text =
            signedInAccount.map { MessageKey.signedInAs.text(in: language, replacing: ["account": $0]) } ?? ""

        // A field changes by code only when the state changed it (a prefill,
        // a clear after an answer), not when the state is catching up with typing.
        if let shown = unconfirmedUsernames.firstIndex(of: state.username) {
            unconfirmedUsernames.removeFirst(shown + 1)
        }
        if usernameField.text == state.username {
            unconfirmedUsernames.removeAll()
        } else if unconfirmedUsernames.isEmpty {
            usernameField.text = state.username
        }
        if let shown = unconfirmedPasswords.firstIndex(of: state.password) {
            unconfirmedPasswords.removeFirst(shown + 1)
        }
        if passwordField.secret == state.password {
            unconfirmedPasswords.removeAll()
        } else if unconfirmedPasswords.isEmpty && state.password.isEmpty {
            passwordField.clear()
        }
        if rememberBox.isChecked != state.remembersUsername {
            rememberBox.isChecked = state.remembersUsername
        }
        usernameField.isSensitive = state.fieldsEnabled
        passwordField.isSensitive = state.fieldsEnabled
        rememberBox.isSensitive = state.fieldsEnabled
        logInButton.isSensitive = state.canSubmit

        progress.isVisible = state.showsProgress
        spinner.isSpinning = state.showsProgress

        messageRow.isVisible = state.message != nil
        messageLabel.text = state.message?.text(in: language) ?? ""
        messageIcon.show(named: state.message == .sessionNotSaved ? "dialog-warning-symbolic" : "dialog-error-symbolic")
        countdownLabel.isVisible = state.retryRemaining != nil
        countdownLabel.text =
            state.retryRemaining.map { MessageKey.retryCountdownText(remaining: $0, in: language) } ?? ""

        // After an answer, the cursor goes back where the user will type next.
        if wasInFlight && !state.isInFlight && signedInAccount == nil {
            (state.password.isEmpty && state.username.isEmpty ? usernameField as Widget : passwordField).grabFocus()
        }
        if !wasSignedIn && signedInAccount != nil {
            logOutButton.grabFocus()
        }
        wasInFlight = state.isInFlight
        wasSignedIn = signedInAccount != nil
        fitWindow()
    }

    /// Grows the window when its content grew (a message appeared, a longer
    /// language), so nothing is cut off or hidden below the fold. The window
    /// system may answer a resize late, so the check is repeated once the
    /// layout has settled.
    private func fitWindow() {
        window.grow(toHeight: content.naturalHeight(forWidth: window.width))
        guard !fitScheduled else { return }
        fitScheduled = true
        Task { @GtkActor [weak self] in
            for delay in [100, 400] {
                do {
                    try await Task.sleep(for: .milliseconds(delay))
                } catch {
                    break
                }
                guard let self else { return }
                window.grow(toHeight: content.naturalHeight(forWidth: window.width))
            }
            self?.fitScheduled = false
        }
    }
}
