import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

@testable import LatchkeyCLI

/// `--help`, the manual page and the bash, zsh and fish completions come from
/// the one description of the commands, and each of them holds all of it (issue 17).
@Suite("latchkey help, manual page and completions from one description", .serialized, .sandboxed)
struct CLIDescriptionTests {
    @Test("every command and option of the description appears in --help and in its command's help")
    func help() throws {
        let tool = GeneratedFiles.flattened(try latchkey(["--help"]).text)
        for command in Command.all {
            #expect(tool.contains(command.synopsis), "\(command.name)")
            let own = GeneratedFiles.flattened(try latchkey(["help"] + command.words).text)
            #expect(own.contains("Usage: \(command.usage)") && own.contains(command.summary), "\(command.name)")
            for option in command.options {
                #expect(own.contains("\(option.synopsis) \(option.help)"), "\(command.name) \(option.name)")
            }
            for exit in command.exits {
                #expect(own.contains("exit \(exit.status) \(exit.meaning)"), "\(command.name)")
            }
        }
        for option in Tool.globalOptions {
            #expect(tool.contains("\(option.synopsis) \(option.help)"), "\(option.name)")
        }
        for variable in Tool.environment { #expect(tool.contains(variable.name), "\(variable.name)") }
        for exit in Tool.exitStatuses { #expect(tool.contains("\(exit.status) \(exit.meaning)")) }
    }

    @Test(
        "the manual page renders with man -l without warnings and holds every command, option, variable and exit status"
    )
    func manualPage() throws {
        let page = try GeneratedFiles.write(["manpage"], as: "latchkey.1")
        let environment: [String: String?] = ["LC_ALL": "C", "MANWIDTH": "200", "MANPAGER": "cat", "PAGER": "cat"]
        let rendered = try GeneratedFiles.run("man", ["--warnings", "-l", page], environment: environment)
        #expect(rendered.status == 0 && rendered.stderr.isEmpty, "man warned: \(rendered.stderr)")
        let text = GeneratedFiles.flattened(rendered.text)
        #expect(
            text.contains("LATCHKEY(1)")
                && text.contains("NAME latchkey, git-credential-latchkey, docker-credential-latchkey - "))
        for command in Command.all {
            #expect(text.contains(command.synopsis), "\(command.name)")
            #expect(text.contains(capitalized(command.summary)), "\(command.name)")
        }
        for option in GeneratedFiles.allOptions {
            #expect(
                text.contains(
                    option.names.reversed().joined(separator: ", ") + (option.valueText.map { " \($0)" } ?? "")),
                "\(option.name)")
        }
        for variable in Tool.environment { #expect(text.contains(variable.name)) }
        for exit in Tool.exitStatuses { #expect(text.contains("\(exit.status) \(capitalized(exit.meaning))")) }
        for name in Tool.otherNames {
            #expect(try latchkey(["manpage", name]).text == ".so man1/latchkey.1\n")
        }
        #expect(try latchkey(["manpage", "git-credential"]).status == 64)
    }

    private func capitalized(_ text: String) -> String {
        text.prefix(1).uppercased() + text.dropFirst()
    }

    @Test("every command word and option appears in each completion script", arguments: ["bash", "zsh", "fish"])
    func completionScripts(shell: String) throws {
        let script = try latchkey(["completion", shell]).text
        #expect(!script.isEmpty)
        for command in Command.all {
            for word in command.words { #expect(script.contains(word), "\(shell): \(command.name)") }
            for argument in command.arguments {
                if case .choices(let words) = argument.completion {
                    for word in words { #expect(script.contains(word)) }
                }
            }
        }
        for option in GeneratedFiles.allOptions {
            let long = shell == "fish" ? "-l " + option.name.dropFirst(2) : option.name
            #expect(script.contains(long), "\(shell): \(option.name)")
            if let short = option.short {
                #expect(script.contains(shell == "fish" ? "-s " + short.dropFirst() : short))
            }
            if case .choices(let words) = option.completion { for word in words { #expect(script.contains(word)) } }
        }
    }

    /// Lines typed before <TAB>, and what each shell must offer there (sorted).
    static let completionCases: [([String], [String])] = [
        (["ses"], ["session"]), (["session", "g"], ["get"]), (["--backend", "f"], ["file"]),
        (["--backend", "file", "st"], ["status"]),
        (["--app", "x", "session", "get", "a", "--no"], ["--no-newline"]),
        (["git-credential", ""], ["erase", "get", "store"]),
        (["help", "sta"], ["status"]), (["audit", ""], ["reset", "show", "verify"]), (["completion", "f"], ["fish"]),
        (["status", "x"], []),
    ]

    @Test("the bash completion is registered and completes `latchkey ses<TAB>` to `session`, and more, in a real bash")
    func bash() throws {
        let script = try GeneratedFiles.write(["completion", "bash"], as: "latchkey")
        #expect(try GeneratedFiles.run("bash", ["-n", script]).status == 0)
        // One bash for every case: each line of input is the words typed, the last one at the cursor.
        let input = Self.completionCases.map { $0.0.map { "'\($0)'" }.joined(separator: " ") + "\n" }.joined()
        let run = try GeneratedFiles.run(
            "bash",
            [
                "--norc", "--noprofile", "-c",
                """
                source "$1" || exit 9
                complete -p latchkey
                while IFS= read -r line; do
                    eval "typed=($line)"
                    COMP_WORDS=(latchkey "${typed[@]}"); COMP_CWORD=${#typed[@]}; COMPREPLY=()
                    _latchkey
                    printf '%s\n' "${COMPREPLY[*]}"
                done
                """, "bash", script,
            ], input: input)
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.text.components(separatedBy: "\n")
        #expect(lines.first == "complete -F _latchkey latchkey")
        for (index, (words, expected)) in Self.completionCases.enumerated() {
            let offered =
                lines.count > index + 1
                ? lines[index + 1].split(separator: " ").map(String.init).sorted() : ["(missing)"]
            #expect(offered == expected, "latchkey \(words.joined(separator: " "))<TAB>")
        }
    }

    @Test("the fish completion passes fish -n and completes in a real fish")
    func fish() throws {
        let script = try GeneratedFiles.write(["completion", "fish"], as: "latchkey.fish")
        #expect(try GeneratedFiles.run("fish", ["--no-config", "-n", script]).status == 0)
        // One fish for every case; an empty line ends each case's completions.
        let lines = Self.completionCases.map { (["latchkey"] + $0.0).joined(separator: " ") }
        let run = try GeneratedFiles.run(
            "fish",
            [
                "--no-config", "-c", "source $argv[1]; for line in $argv[2..-1]; complete -C$line; echo; end",
                script,
            ] + lines)
        #expect(run.status == 0, "\(run.stderr)")
        let blocks = run.text.components(separatedBy: "\n\n")
        for (index, (words, expected)) in Self.completionCases.enumerated() {
            let block = index < blocks.count ? blocks[index] : "(missing)"
            let offered = block.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }.filter {
                !$0.isEmpty
            }.sorted()
            #expect(offered == expected, "latchkey \(words.joined(separator: " "))<TAB>")
        }
    }

    @Test("the zsh completion passes zsh -n and registers itself after compinit")
    func zsh() throws {
        let script = try GeneratedFiles.write(["completion", "zsh"], as: "_latchkey")
        let check = try GeneratedFiles.run("zsh", ["-n", script])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(try String(contentsOfFile: script, encoding: .utf8).hasPrefix("#compdef latchkey\n"))
        let home = try freshDirectory()
        let run = try GeneratedFiles.run(
            "zsh",
            [
                "-f", "-c", "autoload -U compinit && compinit -u -D && source $1 && print -r -- $_comps[latchkey]",
                "zsh", script,
            ],
            environment: ["ZDOTDIR": home, "HOME": home])
        #expect(run.status == 0 && run.text == "_latchkey\n", "\(run.stderr)")
    }

    @Test(
        "make install-built PREFIX=... installs the binary, the manual pages, the three completions where man, bash and fish find them, and the agent's units"
    )
    func install() throws {
        let prefix = try freshDirectory() + "/prefix"
        let binary = try latchkeyPath()
        let make = try GeneratedFiles.run(
            "make",
            [
                "-C", GeneratedFiles.repository, "--no-print-directory", "install-built",
                "PREFIX=\(prefix)", "LATCHKEY_BINARY=\(binary)",
            ])
        #expect(make.status == 0, "\(make.stderr)")
        #expect(FileManager.default.isExecutableFile(atPath: prefix + "/bin/latchkey"))
        #expect(
            try FileManager.default.destinationOfSymbolicLink(atPath: prefix + "/bin/git-credential-latchkey")
                == "latchkey")
        let pages = try FileManager.default.contentsOfDirectory(atPath: prefix + "/share/man/man1").sorted()
        #expect(
            pages == Tool.manualPages.map { $0 + ".1" }.sorted(), "the Makefile's MANUAL_PAGES are the binary's pages")
        #expect(
            FileManager.default.contents(atPath: prefix + "/share/man/man1/latchkey.1")
                == (try latchkey(["manpage"])).stdout)
        let files = [
            "bash": "/share/bash-completion/completions/latchkey", "zsh": "/share/zsh/site-functions/_latchkey",
            "fish": "/share/fish/vendor_completions.d/latchkey.fish",
        ]
        for (shell, path) in files {
            #expect(
                FileManager.default.contents(atPath: prefix + path) == (try latchkey(["completion", shell])).stdout,
                "\(shell)")
        }
        let alias = try GeneratedFiles.run(
            "man", ["-M", prefix + "/share/man", "git-credential-latchkey"],
            environment: ["LC_ALL": "C", "MANPAGER": "cat", "PAGER": "cat", "MANPATH": nil])
        #expect(alias.status == 0 && alias.text.contains("LATCHKEY(1)"), "\(alias.stderr)")
        // Where each shell looks: bash-completion's loader and fish find the installed files through XDG_DATA_DIRS.
        let lookup: [String: String?] = [
            "XDG_DATA_DIRS": prefix + "/share:/usr/share", "PATH": prefix + "/bin:/usr/bin:/bin",
        ]
        let bash = try GeneratedFiles.run(
            "bash",
            [
                "--norc", "--noprofile", "-c",
                """
                source /usr/share/bash-completion/bash_completion || exit 9
                _completion_loader latchkey
                COMP_WORDS=(latchkey ses); COMP_CWORD=1; _latchkey; echo "${COMPREPLY[*]}"
                """,
            ], environment: lookup)
        #expect(bash.text == "session\n", "\(bash.stderr)")
        // Not --no-config: that skips the set-up that puts XDG_DATA_DIRS in fish's completion path. A fresh home instead.
        let home = try freshDirectory()
        let fish = try GeneratedFiles.run(
            "fish", ["-c", "complete -C'latchkey ses'"],
            environment: lookup.merging(["HOME": home, "XDG_CONFIG_HOME": home, "XDG_DATA_HOME": home]) { $1 })
        #expect(fish.text.hasPrefix("session\t"), "\(fish.stderr)")
        // The agent's user units, the service naming the installed binary (docs/AGENT.md).
        let units = prefix + "/lib/systemd/user/"
        let service = try String(contentsOfFile: units + "latchkey-agent.service", encoding: .utf8)
        #expect(
            service.contains("ExecStart=\(prefix)/bin/latchkey agent run") && !service.contains("@BINDIR@"),
            "\(service)")
        let socket = try String(contentsOfFile: units + "latchkey-agent.socket", encoding: .utf8)
        #expect(socket.contains("ListenStream=%t/latchkey/agent.sock") && socket.contains("SocketMode=0600"))
        let readme = try String(contentsOfFile: GeneratedFiles.repository + "/README.md", encoding: .utf8)
        for path in files.values.sorted() + ["/share/man/man1", "/lib/systemd/user"] {
            #expect(readme.contains("$(PREFIX)" + path), "README lists \(path)")
        }
    }

    @Test(
        "the description is consistent: an option name takes a value everywhere or nowhere; every exit status is documented"
    )
    func consistency() {
        var valued: [String: Bool] = [:]
        for option in GeneratedFiles.allOptions {
            for name in option.names {
                #expect(valued[name] == nil || valued[name] == option.takesValue, "\(name)")
                valued[name] = option.takesValue
            }
        }
        let documented = Set(Tool.exitStatuses.map(\.status))
        #expect(documented == Set(LatchkeyError.Code.exitStatusTable.values).union([0]))
        for command in Command.all {
            #expect(command.exits.allSatisfy { documented.contains($0.status) }, "\(command.name)")
        }
    }
}
