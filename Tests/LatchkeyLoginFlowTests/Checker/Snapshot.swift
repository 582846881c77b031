import Latchkey

@testable import LatchkeyLoginFlow

/// Every stored property of a `Login.State`, hashable, for deduplicating
/// states and for checking that an event changed nothing.
///
/// Times are kept as offsets from the run's origin, so the snapshot is exact.
struct Snapshot: Hashable {
    let isVisible: Bool
    let username: String
    let password: [UInt8]
    let remembersUsername: Bool
    let pendingGeneration: Int?
    let lastGeneration: Int
    let message: MessageKey?
    let signedInAccount: String?
    let now: Duration?
    let retryDeadline: Duration?

    init(_ state: Login.State, origin: ContinuousClock.Instant = Fixtures.origin) {
        isVisible = state.isVisible
        username = state.username
        password = state.password.copyBytes()
        remembersUsername = state.remembersUsername
        pendingGeneration = state.pendingGeneration
        lastGeneration = state.lastGeneration
        message = state.message
        signedInAccount = state.signedInAccount
        now = state.now.map { origin.duration(to: $0) }
        retryDeadline = state.retryDeadline.map { origin.duration(to: $0) }
    }
}
