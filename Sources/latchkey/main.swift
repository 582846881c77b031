// The `latchkey` command. Until the full command set lands, it prints its help.
let arguments = CommandLine.arguments.dropFirst()
if arguments.first == "--version" {
    print("latchkey 0.1.0")
} else {
    print("""
    latchkey: keeps an app's credentials (remembered username, session tokens) in the
    Secret Service or an encrypted file, wipes them by policy, and audits every event.

    Usage: latchkey [--help] [--version]
    """)
}
