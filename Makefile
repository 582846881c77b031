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

clean:
	rm -rf .build
