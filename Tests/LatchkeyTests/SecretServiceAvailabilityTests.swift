import Foundation
import LatchkeyTestSupport
import Testing

@testable import Latchkey

@Suite("Secret Service availability", .sandboxed)
struct SecretServiceAvailabilityTests {
    /// A private `dbus-daemon` on `<directory>/bus` that can activate nothing,
    /// so nobody owns or can start `org.freedesktop.secrets` on it. Killed on release.
    final class EmptyBus {
        let directory: URL
        let address: String
        private let process = Process()

        init() throws {
            directory = URL(fileURLWithPath: try freshDirectory("bus"))
            let services = directory.appendingPathComponent("services")
            try FileManager.default.createDirectory(at: services, withIntermediateDirectories: true)
            let config = directory.appendingPathComponent("bus.conf")
            try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(directory.path)/bus</listen>
              <servicedir>\(services.path)</servicedir>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """.write(to: config, atomically: true, encoding: .utf8)
            let output = Pipe()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
            process.arguments = ["--config-file=\(config.path)", "--print-address", "--nofork"]
            process.standardOutput = output
            try process.run()
            var printed = Data()
            while !printed.contains(UInt8(ascii: "\n")) {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                printed.append(chunk)
            }
            address = String(decoding: printed, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }

        deinit {
            // SIGKILL: a child started by Foundation's Process inherits the test
            // runner's blocked signal mask, so it may never see SIGTERM.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            try? FileManager.default.removeItem(at: directory) // best effort: a temporary directory
        }
    }

    static let noBus = ["HOME": "/nonexistent", "PATH": "/usr/bin:/bin"]

    @Test("no session bus gives unavailable in well under a second, from the check and from the backend")
    func noSessionBus() throws {
        let check = SecretServiceTestSupport.failure {
            try SecretServiceAvailability.check(environment: Self.noBus, timeout: .seconds(3))
        }
        #expect(check.error?.code == .unavailable)
        #expect(check.error?.message.contains("no D-Bus session bus") == true)
        #expect(check.elapsed < .seconds(1))

        let backend = SecretServiceBackend(
            appID: try AppID("com.example.nobus"), deadline: .seconds(3), environment: Self.noBus)
        let read = SecretServiceTestSupport.failure { _ = try backend.read(ItemKey(kind: .username, name: "last")) }
        #expect(read.error?.code == .unavailable)
        #expect(read.elapsed < .seconds(1))
        let write = SecretServiceTestSupport.failure {
            try backend.write(StoredItem(value: SecretBytes(utf8: "x")), for: ItemKey(kind: .username, name: "last"))
        }
        #expect(write.error?.code == .unavailable)
    }

    @Test("an XDG_RUNTIME_DIR without a bus socket is no session bus")
    func runtimeDirectoryWithoutBus() {
        let check = SecretServiceTestSupport.failure {
            try SecretServiceAvailability.check(
                environment: ["XDG_RUNTIME_DIR": freshDirectory()], timeout: .seconds(3))
        }
        #expect(check.error?.code == .unavailable)
    }

    @Test("a bus where nobody owns or can activate org.freedesktop.secrets gives unavailable in well under a second")
    func busWithoutSecretService() throws {
        let bus = try EmptyBus()
        try #require(bus.address.hasPrefix("unix:"), "dbus-daemon printed no address")
        for environment in [["DBUS_SESSION_BUS_ADDRESS": bus.address], ["XDG_RUNTIME_DIR": bus.directory.path]] {
            let check = SecretServiceTestSupport.failure {
                try SecretServiceAvailability.check(environment: environment, timeout: .seconds(3))
            }
            #expect(check.error?.code == .unavailable)
            #expect(
                check.error?.message.contains("nobody owns org.freedesktop.secrets") == true, "the bus was not reached")
            #expect(check.elapsed < .seconds(1))
        }
        let backend = SecretServiceBackend(
            appID: try AppID("com.example.emptybus"), deadline: .seconds(3),
            environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        // The bus must outlive the calls: it is what makes the answer "nobody owns the name".
        let list = withExtendedLifetime(bus) { SecretServiceTestSupport.failure { _ = try backend.list(kind: nil) } }
        #expect(list.error?.code == .unavailable)
        #expect(list.error?.message.contains("nobody owns org.freedesktop.secrets") == true)
        #expect(list.elapsed < .seconds(1))
    }

    @Test("a bus address nobody listens on gives unavailable")
    func deadAddress() {
        let check = SecretServiceTestSupport.failure {
            try SecretServiceAvailability.check(
                environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/latchkey-bus"], timeout: .seconds(3))
        }
        #expect(check.error?.code == .unavailable)
        #expect(check.error?.cFunction == "g_dbus_connection_new_for_address_sync")
    }

    @Test("the test session's Secret Service is found", .needsSecretService)
    func realServiceIsAvailable() throws {
        try SecretServiceAvailability.check(environment: ProcessInfo.processInfo.environment, timeout: .seconds(3))
        try SecretServiceBackend(appID: try AppID("com.example.available")).checkAvailability()
    }
}
