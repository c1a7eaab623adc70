# Filmstrip — `make demo` and `make test` work on a fresh Debian machine with Swift installed.
SWIFT ?= swift
# Suites that run thousands of child processes; `make test` runs them after the others.
PROCESS_HEAVY = DamagedMediaTests|HostileTextTests|CacheKillTests|CatalogKillTests|LiveKillTests
# The simulated 24-hour live run measures the test process's memory: it runs alone in its process (suites beside it
# in the same process move the figure it checks).
MEMORY = LiveSoakTests
# Warnings are errors for the package's own targets (see Package.swift).
export FILMSTRIP_WARNINGS_AS_ERRORS ?= 1
# FFmpeg: a static build of the distribution's own source with only what Filmstrip uses (Scripts/build-ffmpeg.sh,
# made by `make deps` and cached), found through pkg-config as `filmstrip-ffmpeg`. FILMSTRIP_SYSTEM_FFMPEG=1 links
# the system's shared FFmpeg instead (as a plain `swift build` does); so does macOS (Homebrew's FFmpeg).
ifeq ($(shell uname -s),Darwin)
FILMSTRIP_SYSTEM_FFMPEG ?= 1
endif
export FILMSTRIP_SYSTEM_FFMPEG ?= 0
ifneq ($(FILMSTRIP_SYSTEM_FFMPEG),1)
export FILMSTRIP_STATIC_FFMPEG = 1
export PKG_CONFIG_PATH := $(shell Scripts/build-ffmpeg.sh --prefix)/lib/pkgconfig$(if $(PKG_CONFIG_PATH),:$(PKG_CONFIG_PATH))
endif

# Release builds (the command every test and benchmark runs, and the one to install) carry the Swift runtime and
# Foundation inside them on Linux, as they carry FFmpeg: a command that decodes nothing starts in about 12 ms instead
# of 20 (docs/performance.md, Process start). Every release build takes the same flag, so none rebuilds the others' modules.
ifeq ($(shell uname -s),Linux)
RELEASE = -c release --static-swift-stdlib
else
RELEASE = -c release
endif

.PHONY: deps build demo test bench lint fuzz tsan asan soak clean

deps:
	@Scripts/deps.sh

build: deps
	$(SWIFT) build

demo: deps
	$(SWIFT) build --product filmstrip
	@Scripts/demo.sh

# The checked-in .swift-format (4 spaces, 120 columns), every warning an error; Package.swift declares exactly
# what each target imports; no task-group child returns a tuple (a compiler defect corrupts them under -O).
lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Benchmarks Examples Fuzz Package.swift
	@python3 Scripts/check-imports.py
	@python3 Scripts/check-task-groups.py

# Users run the release build of `filmstrip`: every test that runs the command (the CLI suites, the page, interop
# and cluster tests) runs that build (the optimiser has broken what the debug build did right).
RELEASE_CLI = $$($(SWIFT) build $(RELEASE) --show-bin-path)/filmstrip

test: deps lint
	$(SWIFT) build --build-tests
	$(SWIFT) build $(RELEASE) --product filmstrip
	@# Test media first (made once with the ffmpeg CLI and cached), so the parallel run never waits on ffmpeg.
	$(SWIFT) test --skip-build --filter MediaFixtureTests
	@# Every suite that runs in seconds, in parallel: the player's on a test clock, woken by events, never polling.
	FILMSTRIP_CLI="$(RELEASE_CLI)" $(SWIFT) test --skip-build --skip "$(PROCESS_HEAVY)|$(MEMORY)"
	@# Thousands of short-lived processes (damaged media, kill -9 on the cache): on their own, after the rest.
	FILMSTRIP_CLI="$(RELEASE_CLI)" $(SWIFT) test --skip-build --filter "$(PROCESS_HEAVY)"
	$(SWIFT) test --skip-build --filter "$(MEMORY)"
	@# `filmstrip serve` and `filmstrip page` over raw HTTP and in headless Chromium.
	FILMSTRIP_BIN="$(RELEASE_CLI)" python3 -m unittest discover -s Tests/Browser -v
	@# `play --window` on a virtual screen and sound card (Xvfb, Openbox, a PulseAudio null sink): picture, keys,
	@# resizing, HDR and the seek bar's scrub previews; Extras/mpv/filmstrip.lua in mpv.
	FILMSTRIP_BIN="$(RELEASE_CLI)" python3 -m unittest discover -s Tests/Window -v
	@# The tracks Filmstrip writes, read by real Shaka Player and dash.js builds in headless Chromium.
	FILMSTRIP_BIN="$(RELEASE_CLI)" python3 -m unittest discover -s Tests/Interop -v
	@# Streams other packagers write (Shaka Packager at test time, ffmpeg layouts besides): pictures against ffmpeg's
	@# decode by presentation time, bytes against the budget, over a loopback server that logs every request.
	FILMSTRIP_BIN="$(RELEASE_CLI)" python3 -m unittest discover -s Tests/RealWorld -v
	@# A corpus of small odd media files other tools and devices wrote (Tests/Corpus): inspect, frame --exact,
	@# generate and play, each against ffmpeg's decode of the same file from its start.
	FILMSTRIP_BIN="$(RELEASE_CLI)" python3 -m unittest discover -s Tests/Corpus -v
	@# `filmstrip catalog generate` as a Slurm job array on a one-node cluster started for the test.
	FILMSTRIP_BIN="$(RELEASE_CLI)" python3 -m unittest discover -s Tests/Cluster -v

bench: deps
	@Scripts/deps.sh --bench
	$(SWIFT) build $(RELEASE) --product FilmstripBench
	$(SWIFT) build $(RELEASE) --product filmstrip
	@Benchmarks/run.sh

# libFuzzer + AddressSanitizer over every parser, FUZZ_SECONDS each (default 60); the table lands in
# fuzz-output/summary.md. Crashes it finds become inputs in Tests/FilmstripFormatsTests/Fuzzing/Regressions.
fuzz: deps
	@Scripts/fuzz.sh

# ThreadSanitizer over the suites with locks and threads, in a build directory of its own. The live soak is left
# out: its bound on memory growth is for a normal build (the sanitizer's shadow memory grows with every allocation).
TSAN_SUITES = FilmstripLoadingTests|FilmstripThumbnailsTests|FilmstripMediaTests|FilmstripPlayerTests
tsan: deps
	$(SWIFT) build --build-tests --sanitize=thread -Xswiftc -DFILMSTRIP_TSAN --scratch-path .build-tsan
	$(SWIFT) test --skip-build --sanitize=thread -Xswiftc -DFILMSTRIP_TSAN --filter MediaFixtureTests --scratch-path .build-tsan
	TSAN_OPTIONS="second_deadlock_stack=1" $(SWIFT) test --skip-build --sanitize=thread \
		-Xswiftc -DFILMSTRIP_TSAN --scratch-path .build-tsan --filter "$(TSAN_SUITES)" --skip LiveSoakTests

# The command-line tests (and the damaged-media runs) against an AddressSanitizer build of `filmstrip`: the C side
# (FFmpeg, libjpeg-turbo, libpng, libwebp) gets every input those tests give it; a report fails the run that made it.
ASAN_CLI = $$($(SWIFT) build --sanitize=address --scratch-path .build-asan --show-bin-path)/filmstrip
asan: deps
	$(SWIFT) build --product filmstrip --sanitize=address --scratch-path .build-asan
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --filter MediaFixtureTests
	@# The kill -9 suites time their kills against the normal build's speed: not meaningful at ASan's.
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 FILMSTRIP_CLI="$(ASAN_CLI)" $(SWIFT) test --skip-build \
		--filter "FilmstripCLITests" --skip "CacheKillTests|CatalogKillTests|LiveKillTests"

# The long runs: 100 damaged files per container and kind (about 8,400 runs), 1,000 kills on the cache, and 200
# runs of two catalog processes on one shard.
soak: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --filter MediaFixtureTests
	FILMSTRIP_DAMAGE_CASES=100 FILMSTRIP_DAMAGE_REPORT=soak-damaged-media.md FILMSTRIP_KILL_ITERATIONS=1000 \
		$(SWIFT) test --skip-build --filter "$(PROCESS_HEAVY)"
	$(SWIFT) test --skip-build --filter "$(MEMORY)"
	@# Two runs of one shard at once, 200 times: each item made once, one done line each.
	@for i in $$(seq 1 200); do $(SWIFT) test --skip-build --filter sameShardTwice > /dev/null 2>&1 \
		|| { echo "sameShardTwice failed on run $$i"; exit 1; }; done; echo "sameShardTwice: 200 runs passed"

clean:
	rm -rf .build .build-tsan .build-asan demo-output bench-output fuzz-output soak-damaged-media.md
