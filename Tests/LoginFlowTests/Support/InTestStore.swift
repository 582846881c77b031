import LoginFlow

/// A small credential store for the controller tests, keeping the
/// `LoginCredentialStore` contract in memory. To be replaced by Latchkey's
/// `Vault` once it conforms.
actor InTestStore: LoginCredentialStore {
    struct Failure: Error {}

    private(set) var username: String?
    private(set) var remembers: Bool
    private(set) var sessions: [String: SessionTokens] = [:]
    private(set) var logouts: [String?] = []
    private let failing: Set<LoginStoreFailure.Operation>

    init(username: String? = nil, remembers: Bool = true, failing: Set<LoginStoreFailure.Operation> = []) {
        self.username = username
        self.remembers = remembers
        self.failing = failing
    }

    func rememberedUsername() throws -> String? {
        try check(.load)
        return remembers ? username : nil
    }

    func remembersUsername() throws -> Bool {
        try check(.load)
        return remembers
    }

    func setRemembersUsername(_ remembers: Bool) throws {
        try check(.setRemembersUsername)
        self.remembers = remembers
        if !remembers { username = nil }
    }

    func rememberUsername(_ username: String) throws {
        try check(.rememberUsername)
        if remembers { self.username = username }
    }

    func saveSession(_ tokens: SessionTokens, account: String) throws {
        try check(.saveSession)
        sessions[account] = tokens
    }

    func logout(account: String?) throws {
        try check(.logout)
        logouts.append(account)
        if let account { sessions[account] = nil }
    }

    private func check(_ operation: LoginStoreFailure.Operation) throws {
        if failing.contains(operation) { throw Failure() }
    }
}
