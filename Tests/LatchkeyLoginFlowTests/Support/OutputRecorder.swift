import LatchkeyLoginFlow
import Synchronization

/// Collects what a `LoginController` tells its UI.
final class OutputRecorder: Sendable {
    private let outputs = Mutex<[LoginControllerOutput]>([])

    var handler: @Sendable (LoginControllerOutput) -> Void {
        { output in self.outputs.withLock { $0.append(output) } }
    }

    var focused: [Login.Field] {
        outputs.withLock { $0.compactMap { if case .focus(let field) = $0 { field } else { nil } } }
    }

    var failures: [LoginStoreFailure.Operation] {
        outputs.withLock { $0.compactMap { if case .storeFailed(let failure) = $0 { failure.operation } else { nil } } }
    }

    var renders: Int {
        outputs.withLock { $0.count { if case .render = $0 { true } else { false } } }
    }
}
