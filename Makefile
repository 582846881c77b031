# Latchkey: every target installs what is missing first (Debian packages through apt-get).
SWIFT ?= swift
PREFIX ?= /usr/local

.PHONY: deps build demo test bench stress fuzz install clean

deps:
	@.ci/install-deps

build: deps
	$(SWIFT) build

# The release binary as users run it: the Swift runtime and Foundation linked in
# statically (quicker start-up, no toolchain needed at run time); libsodium,
# libsecret and GLib stay the system's shared libraries.
RELEASE_FLAGS ?= -c release --static-swift-stdlib

demo: deps
	$(SWIFT) build $(RELEASE_FLAGS) --product latchkey
	$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/latchkey demo

# Installs `latchkey` and `git-credential-latchkey` (a symlink to it), nothing else.
install: deps
	$(SWIFT) build $(RELEASE_FLAGS) --product latchkey
	install -d "$(DESTDIR)$(PREFIX)/bin"
	install -m 0755 "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/latchkey" "$(DESTDIR)$(PREFIX)/bin/latchkey"
	ln -sf latchkey "$(DESTDIR)$(PREFIX)/bin/git-credential-latchkey"

test: deps
	$(SWIFT) build --build-tests
	.ci/with-keyring $(SWIFT) test --skip-build

clean:
	rm -rf .build

# Fuzzing (not part of `make test`): each target is Fuzz/<name>.swift, built with the
# library's sources and -sanitize=fuzzer,address by Fuzz/run; add more names here.
FUZZ_TARGETS ?= vault-decoder
FUZZ_RUNS ?= 1000000
FUZZ_SECONDS ?= 300

fuzz: deps
	@for target in $(FUZZ_TARGETS); do Fuzz/run $$target $(FUZZ_RUNS) $(FUZZ_SECONDS) || exit 1; done
