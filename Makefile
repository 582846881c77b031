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
