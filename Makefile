# Latchkey: every target installs what is missing first (Debian packages through apt-get).
SWIFT ?= swift
# Every debug build here has the library's test seams, which the tests use (Package.swift);
# release builds never do, and neither does an app's build, which does not set this.
export LATCHKEY_TEST_SEAMS = 1
PREFIX ?= /usr/local

# The Swift files the formatter keeps (.swift-format; CONTRIBUTING.md says why these settings).
FORMATTED = Sources Tests Examples Package.swift

.PHONY: deps build demo test format api docs release bench stress fuzz install install-built clean login-window login-window-test interop interop-keepassxc interop-kwallet interop-unlock

deps:
	@.ci/install-deps

build: deps
	$(SWIFT) build

# The release binary as users run it: the Swift runtime, Foundation, libstdc++ and
# libgcc linked in statically (quicker start-up, no toolchain needed at run time;
# scripts/release-link-flags); libsodium stays the system's shared library, so it gets
# Debian's security updates, and libsecret (with GIO and GLib) is opened with dlopen
# only when the Secret Service is used. No $ORIGIN run path: the binary loads its shared
# libraries (libc, libsodium) from the system's directories only, never from beside itself.
RELEASE_FLAGS ?= -c release --static-swift-stdlib --disable-local-rpath $(shell scripts/release-link-flags $(CURDIR)/.build/static-c++)

demo: deps
	$(SWIFT) build $(RELEASE_FLAGS) --product latchkey
	$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/latchkey demo

# Installs `latchkey`, `git-credential-latchkey` and `docker-credential-latchkey` (symlinks
# to it), the manual page latchkey(1) with a page for each other name pointing to it,
# the agent's systemd user units (latchkey-agent.socket and .service, docs/AGENT.md), and
# the bash, zsh and fish completions; the binary writes the pages and the completions itself
# (`latchkey manpage`, `latchkey completion SHELL`), from its one description of the commands.
install: deps
	$(SWIFT) build $(RELEASE_FLAGS) --product latchkey
	$(MAKE) --no-print-directory install-built LATCHKEY_BINARY="$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/latchkey"

# `install` once the binary is built: LATCHKEY_BINARY is the binary to install
# (`make test` checks this target with the debug build). MANUAL_PAGES must be the
# pages `latchkey manpage PAGE` knows; a test compares them.
LATCHKEY_BINARY ?= .build/release/latchkey
MANUAL_PAGES = latchkey git-credential-latchkey docker-credential-latchkey
SHARE = $(DESTDIR)$(PREFIX)/share

install-built:
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(SHARE)/man/man1" "$(SHARE)/bash-completion/completions" \
	  "$(SHARE)/zsh/site-functions" "$(SHARE)/fish/vendor_completions.d"
	install -d "$(DESTDIR)$(PREFIX)/lib/systemd/user"
	install -m 0755 "$(LATCHKEY_BINARY)" "$(DESTDIR)$(PREFIX)/bin/latchkey"
	install -m 0644 systemd/latchkey-agent.socket "$(DESTDIR)$(PREFIX)/lib/systemd/user/latchkey-agent.socket"
	sed 's|@BINDIR@|$(PREFIX)/bin|' systemd/latchkey-agent.service > "$(DESTDIR)$(PREFIX)/lib/systemd/user/latchkey-agent.service"
	chmod 0644 "$(DESTDIR)$(PREFIX)/lib/systemd/user/latchkey-agent.service"
	ln -sf latchkey "$(DESTDIR)$(PREFIX)/bin/git-credential-latchkey"
	ln -sf latchkey "$(DESTDIR)$(PREFIX)/bin/docker-credential-latchkey"
	@set -e; umask 022; for page in $(MANUAL_PAGES); do \
	  "$(LATCHKEY_BINARY)" manpage $$page > "$(SHARE)/man/man1/$$page.1"; done
	@umask 022; "$(LATCHKEY_BINARY)" completion bash > "$(SHARE)/bash-completion/completions/latchkey"
	@umask 022; "$(LATCHKEY_BINARY)" completion zsh > "$(SHARE)/zsh/site-functions/_latchkey"
	@umask 022; "$(LATCHKEY_BINARY)" completion fish > "$(SHARE)/fish/vendor_completions.d/latchkey.fish"
	@echo "installed latchkey, its manual pages, its bash, zsh and fish completions and the agent's systemd user units under $(DESTDIR)$(PREFIX)"

test: deps
	$(SWIFT) format lint --strict --parallel --recursive $(FORMATTED)
	$(SWIFT) build --build-tests
	SWIFT=$(SWIFT) .ci/test

# Rewrites every Swift file as .swift-format says; `make test` fails on any file it would change.
format:
	$(SWIFT) format format --in-place --parallel --recursive $(FORMATTED)

# The API documentation of Latchkey, LatchkeyTesting and LatchkeyLoginFlow as one static site
# in .build/docs/Latchkey.doccarchive, from the DocC catalogs Sources/<Module>/<Module>.docc and
# the doc comments, with the toolchain's docc; fails on any warning (scripts/docs). `make test`
# runs it. scripts/docs-screenshot shows a page in headless Chromium.
docs: deps
	$(SWIFT) build --build-tests
	SWIFT=$(SWIFT) scripts/docs

# Regenerates api/*.txt, the committed public surface `make test` checks, after an intended API change.
api: deps
	$(SWIFT) build --build-tests
	SWIFT=$(SWIFT) scripts/public-api --write

clean:
	rm -rf .build

# Tags a release: checks that VERSION, Tool.version (what `latchkey --version` prints) and the
# newest CHANGELOG.md entry agree and that the tree is clean, then creates the annotated tag
# VERSION (no `v`). Pushes nothing. scripts/test-release tests it in a throw-away clone.
VERSION ?=

release:
	@scripts/release "$(VERSION)"

# Fuzzing (not part of `make test`): each target is Tests/Fuzz/<name>.swift, built with the
# library's sources and -sanitize=fuzzer,address by Tests/Fuzz/run; add more names here.
FUZZ_TARGETS ?= vault-decoder policy-parser git-credential-parser agent-request anchor-reader
FUZZ_RUNS ?= 1000000
FUZZ_SECONDS ?= 300

fuzz: deps
	@for target in $(FUZZ_TARGETS); do Tests/Fuzz/run $$target $(FUZZ_RUNS) $(FUZZ_SECONDS) || exit 1; done

# Benchmarks and the reliability harness (issue 9): release builds of latchkey-bench
# (never installed), run inside a private D-Bus session with a real gnome-keyring.
# git's own libsecret credential helper, which Debian ships only as source, is built
# into .build/bench-tools for the whole-process comparison when its source is there.
BENCH_ARGS ?=
STRESS_ARGS ?=
GIT_LIBSECRET_SOURCE ?= /usr/share/doc/git/contrib/credential/libsecret/git-credential-libsecret.c

bench: deps
	$(SWIFT) build $(RELEASE_FLAGS) --product latchkey-bench
	$(SWIFT) build $(RELEASE_FLAGS) --product latchkey
	$(SWIFT) build $(RELEASE_FLAGS) --product latchkey-floor
	@mkdir -p .build/bench-tools
	@if [ -f $(GIT_LIBSECRET_SOURCE) ] && [ ! -x .build/bench-tools/git-credential-libsecret ]; then \
	  cc -O2 -o .build/bench-tools/git-credential-libsecret $(GIT_LIBSECRET_SOURCE) \
	    $$(pkg-config --cflags --libs libsecret-1 glib-2.0) || echo "bench: could not build git-credential-libsecret"; fi
	LATCHKEY_AGENT=off .ci/with-keyring $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/latchkey-bench \
	  --git-libsecret $(CURDIR)/.build/bench-tools/git-credential-libsecret $(BENCH_ARGS)

stress: deps
	$(SWIFT) build $(RELEASE_FLAGS) --product latchkey-bench
	$(SWIFT) build $(RELEASE_FLAGS) --product latchkey-testhelper
	$(SWIFT) build $(RELEASE_FLAGS) --product latchkey
	LATCHKEY_AGENT=off .ci/with-keyring $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/latchkey-bench stress $(STRESS_ARGS)

# The GTK 4 login window on LoginFlow and a real Vault (issue 18): its own package in
# Examples/LoginWindow, so GTK never becomes a dependency of the library. Not part of `make test`.
LOGIN_WINDOW_ARGS ?=

login-window: deps
	SWIFT=$(SWIFT) Examples/LoginWindow/run $(LOGIN_WINDOW_ARGS)

# Every scenario of the login-screen story, driven with xdotool and read through AT-SPI under Xvfb.
login-window-test: deps
	SWIFT=$(SWIFT) Examples/LoginWindow/Tests/run-ui-tests

# Interop (issue 13, not part of `make test`): the backend contract suite, a CLI round trip
# and failure handling against KeePassXC as the Secret Service, headless under Xvfb on a
# private D-Bus session; installs keepassxc, xvfb and the X tools it uses when missing.
interop-keepassxc: deps
	SWIFT=$(SWIFT) .ci/interop-keepassxc

# Real clients against the credential helpers (issue 16; not part of `make test` or .ci/run):
# a local docker registry with htpasswd authentication and a git HTTP server demanding
# Basic authentication, both on 127.0.0.1, driven by the real docker and git CLIs inside
# a private D-Bus session with a throw-away gnome-keyring, on both backends (scripts/interop).
# The docker CLI logs in client-side when it reaches no daemon, so no daemon is started.
# Then Latchkey as the Secret Service (issue 36): python keyring, SecretStorage (DH and plain
# sessions), git's libsecret helper (git credential and a clone) and docker-credential-secretservice
# against `latchkey agent run --secret-service` on a private bus with no other provider, the
# trail naming each caller (interop/secret-service-provider-clients, which installs what it needs).
INTEROP_PACKAGES ?= docker-registry apache2-utils curl git python3

interop: deps
	@missing=""; for package in $(INTEROP_PACKAGES); do dpkg -s $$package >/dev/null 2>&1 || missing="$$missing $$package"; done; \
	  command -v docker >/dev/null || missing="$$missing docker.io"; \
	  if [ -n "$$missing" ]; then sudo=""; [ "$$(id -u)" -ne 0 ] && sudo=sudo; \
	    $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; fi
	$(SWIFT) build --product latchkey
	.ci/with-keyring scripts/interop $$($(SWIFT) build --show-bin-path)
	interop/secret-service-provider-clients $$($(SWIFT) build --show-bin-path)/latchkey
	$(MAKE) interop-kwallet
	$(MAKE) interop-unlock

# A locked gnome-keyring 42.1 whose prompter opens on a private Xvfb display (issue 27):
# the unlock dialog appears under secretService.unlock "prompt", typing the password
# (xdotool) completes the command, Escape gives 75, headless is 75 at once; status raises no
# dialog, and one nobody answers ends the command at the deadline (3 s by policy) with
# gnome-keyring still running and the dialog left open (issue 34, case 14).
# With no keyring at all (--no-keyring), the prompt to create one is never dismissed either:
# 75 at the deadline, gnome-keyring still running, and through the agent the dialog stays
# open and answering it creates the keyring (interop/gnome-keyring-create-acceptance).
# interop/with-gnome-keyring-locked.sh installs what it needs with apt.
# Then, on a fresh locked keyring unlocked with keyring-unlock (gnome-keyring's own D-Bus
# call, no prompt), the backend contract suite and a CLI round trip (interop/contract-and-round-trip).
interop-unlock: deps
	$(SWIFT) build --build-tests
	interop/with-gnome-keyring-locked.sh interop/gnome-keyring-unlock-acceptance $$($(SWIFT) build --show-bin-path)/latchkey
	interop/with-gnome-keyring-locked.sh --no-keyring interop/gnome-keyring-create-acceptance $$($(SWIFT) build --show-bin-path)/latchkey
	interop/with-gnome-keyring-locked.sh bash -c 'keyring-unlock && LATCHKEY_TEST_KEYRING_PASSWORD_FILE=$$GNOME_KEYRING_PASSWORD_FILE exec interop/contract-and-round-trip gnome-keyring-unlocked "$$0" "$$1"' \
	  $$($(SWIFT) build --show-bin-path)/latchkey $(SWIFT)

# KWallet 5.103 (Debian 12's kwalletd5) as the Secret Service (issue 27): headless on a private
# bus and Xvfb display, the wallet opened as pam_kwallet5 opens it; interop/with-kwallet.sh
# installs what it needs with apt. Cases: interop/kwallet-acceptance's header.
# Then, on a fresh wallet, the backend contract suite and a CLI round trip (interop/contract-and-round-trip).
interop-kwallet: deps
	$(SWIFT) build --build-tests
	interop/with-kwallet.sh interop/kwallet-acceptance $$($(SWIFT) build --show-bin-path)/latchkey
	interop/with-kwallet.sh interop/contract-and-round-trip kwallet $$($(SWIFT) build --show-bin-path)/latchkey $(SWIFT)
