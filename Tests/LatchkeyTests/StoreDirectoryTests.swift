import LatchkeyTestSupport
import LatchkeyTesting
import Testing

@testable import Latchkey

@Suite("Store directory", .sandboxed)
struct StoreDirectoryTests {
    @Test("the XDG rule: a relative XDG_DATA_HOME is ignored; a relative or missing HOME is named as such")
    func defaults() throws {
        #expect(
            try Vault.defaultStoreDirectory(environment: ["XDG_DATA_HOME": "/x/data", "HOME": "/h"])
                == "/x/data/latchkey")
        #expect(
            try Vault.defaultStoreDirectory(environment: ["XDG_DATA_HOME": "data", "HOME": "/h"])
                == "/h/.local/share/latchkey")
        let relative = #expect(throws: LatchkeyError.self) {
            try Vault.defaultStoreDirectory(environment: ["HOME": "h"])
        }
        #expect(relative?.message.contains("HOME ('h') is not an absolute path") == true)
        let missing = #expect(throws: LatchkeyError.self) { try Vault.defaultStoreDirectory(environment: [:]) }
        #expect(missing?.message.contains("HOME is not set") == true)
    }

    @Test("a vault refuses a relative store directory, opened or made with the app's own backend")
    func relativeRefused() {
        let error = #expect(throws: LatchkeyError.self) {
            _ = try Vault.open(appID: AppID("relative-test"), storeDirectory: "relative/store", backend: .file)
        }
        #expect(error?.code == .invalidInput)
        let made = #expect(throws: LatchkeyError.self) {
            _ = try Vault(appID: AppID("relative-test"), storeDirectory: "relative/store", store: InMemoryBackend())
        }
        #expect(made?.code == .invalidInput)
    }
}
