import Latchkey
import Testing

@testable import LatchkeyLoginFlow

@Suite("Redaction", .sandboxed)
struct RedactionTests {
    static let canary = "canary-password-4d1e"

    /// Every way a value can end up in a log.
    static func renderings(_ value: Any) -> [String] {
        var dumped = ""
        dump(value, to: &dumped)
        return [String(describing: value), String(reflecting: value), "\(value)", dumped]
    }

    @Test("state, events, effects and tokens never show the password or a token")
    func neverShown() {
        let password = SecretBytes(utf8: Self.canary)
        let state = Fixtures.run([
            .appeared(rememberedUsername: nil, remembersUsername: true),
            .usernameChanged("alice"),
            .passwordChanged(password),
        ]).0
        let (_, effects) = Login.reduce(state, .submitTapped)
        let values: [Any] = [
            state, Login.Event.passwordChanged(password), effects, Fixtures.tokens,
            Login.Effect.saveSession(Fixtures.tokens, account: "alice"),
        ]
        for value in values {
            for text in Self.renderings(value) {
                #expect(!text.contains(Self.canary))
                #expect(!text.contains("token-canary"))
            }
        }
        #expect(String(describing: state).contains("alice"), "the rest of the state is still shown")
        #expect(String(describing: state).contains("<redacted>"))
    }
}
