# Latchkey: every target installs what is missing first (Debian packages through apt-get).
SWIFT ?= swift
PREFIX ?= /usr/local

.PHONY: deps build demo test bench stress fuzz install clean

deps:
	@.ci/install-deps

build: deps
	$(SWIFT) build

demo: deps
	$(SWIFT) build -c release --product latchkey
	$$($(SWIFT) build -c release --show-bin-path)/latchkey --help

test: deps
	$(SWIFT) build --build-tests
	.ci/with-keyring $(SWIFT) test --skip-build
	# Second pass, alone on a fresh bus and daemon: tests that lock, stop or kill gnome-keyring.
	LATCHKEY_DESTRUCTIVE_KEYRING_TESTS=1 .ci/with-keyring $(SWIFT) test --skip-build --filter SecretServiceDestructiveTests

clean:
	rm -rf .build

# Fuzzing (not part of `make test`): each target is Fuzz/<name>.swift, built with the
# library's sources and -sanitize=fuzzer,address by Fuzz/run; add more names here.
FUZZ_TARGETS ?= vault-decoder
FUZZ_RUNS ?= 1000000
FUZZ_SECONDS ?= 300

fuzz: deps
	@for target in $(FUZZ_TARGETS); do Fuzz/run $$target $(FUZZ_RUNS) $(FUZZ_SECONDS) || exit 1; done
