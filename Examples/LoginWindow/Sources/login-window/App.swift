import Foundation
import Latchkey
import LatchkeyLoginFlow

/// `login-window`: a GTK 4 login screen on LoginFlow, keeping what it keeps in a Latchkey `Vault`.
@main
enum LoginWindowApp {
    static func main() {
        let environment = ProcessInfo.processInfo.environment
        let options: Options
        do {
            options = try Options(arguments: Array(CommandLine.arguments.dropFirst()), environment: environment)
        } catch {
            Log.line("\(error)\n\(Options.usage)")
            exit(64)
        }
        let language = Options.language(environment: environment)
        if options.printTexts {
            printTexts(in: language)
            exit(0)
        }
        let vault: Vault
        do {
            vault = try options.openVault(environment: environment)
        } catch let error as UsageError {
            Log.line("\(error)")
            exit(64)
        } catch {
            // A LatchkeyError's message never holds a secret or a username.
            Log.line("cannot open the credential store: \(error)")
            exit(69)
        }
        guard GtkActor.assumeIsolated({ Gtk.initialize() }) else {
            Log.line("cannot open a display (is DISPLAY or WAYLAND_DISPLAY set?)")
            exit(69)
        }
        guard let server = options.server else { exit(64) }

        let (commands, commandSink) = AsyncStream.makeStream(of: ScreenCommand.self)
        let (outputs, outputSink) = AsyncStream.makeStream(of: LoginControllerOutput.self)
        let controller = LoginController(
            authenticator: HTTPAuthenticator(server: server, timeout: options.timeout),
            store: vault,
            // A username with white space in it is a typing mistake: submit stays impossible.
            configuration: Login.Configuration { username, _ in !username.contains(where: \.isWhitespace) },
            output: { outputSink.yield($0) })

        GtkActor.assumeIsolated {
            let screen = LoginScreen(language: language) { commandSink.yield($0) }
            // What the controller reports reaches the widgets in order, on GTK's thread.
            Task { @GtkActor in
                for await output in outputs {
                    screen.apply(output)
                }
            }
            // What the user does reaches the controller in order, one event at a time.
            Task.detached {
                for await command in commands {
                    switch command {
                    case .appear:
                        await controller.appear()
                    case .event(let event):
                        await controller.send(event)
                    case .close:
                        await controller.send(.disappeared)
                        // An answer being handled finishes saving before the app quits.
                        await controller.shutDown()
                        do {
                            try await vault.applyExitPolicy()
                        } catch {
                            Log.line("credential store: the exit policy could not be applied (\(type(of: error)))")
                        }
                        await close(screen)
                        return
                    }
                }
            }
            // Closing by signal applies the policy's exit rules too.
            Gtk.onTerminationRequest { commandSink.yield(.close) }
            screen.present()
            commandSink.yield(.appear)
            Gtk.run()
        }
    }

    @GtkActor
    private static func close(_ screen: LoginScreen) {
        screen.destroy()
        Gtk.quit()
    }

    /// Prints every text of `language` as one JSON object (key -> text), for tests and translators.
    private static func printTexts(in language: LoginLanguage) {
        var texts = ["language": language.rawValue]
        for key in MessageKey.allCases {
            texts[key.rawValue] = key.text(in: language)
        }
        let data = (try? JSONSerialization.data(withJSONObject: texts, options: [.sortedKeys])) ?? Data("{}".utf8)
        FileHandle.standardOutput.write(data)
        FileHandle.standardOutput.write(Data("\n".utf8))
    }
}
