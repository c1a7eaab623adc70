# Filmstrip — `make demo` and `make test` work on a fresh Debian machine with Swift installed.
SWIFT ?= swift
# Warnings are errors for the package's own targets (see Package.swift).
export FILMSTRIP_WARNINGS_AS_ERRORS ?= 1

.PHONY: deps build demo test bench lint fuzz clean

deps:
	@Scripts/deps.sh

build: deps
	$(SWIFT) build

demo: deps
	$(SWIFT) build --product filmstrip
	@Scripts/demo.sh

# The checked-in .swift-format (4 spaces, 120 columns), every warning an error; Package.swift declares exactly
# what each target imports.
lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Benchmarks Examples Fuzz Package.swift
	@python3 Scripts/check-imports.py

test: deps lint
	$(SWIFT) build --build-tests
	@# Test media first (made once with the ffmpeg CLI and cached), so the parallel run never waits on ffmpeg.
	$(SWIFT) test --skip-build --filter MediaFixtureTests
	$(SWIFT) test --skip-build
	@# `filmstrip serve` and `filmstrip page` over raw HTTP and in headless Chromium.
	FILMSTRIP_BIN="$$($(SWIFT) build --show-bin-path)/filmstrip" python3 -m unittest discover -s Tests/Browser -v

bench: deps
	@Scripts/deps.sh --bench
	$(SWIFT) build -c release --product FilmstripBench
	$(SWIFT) build -c release --product filmstrip
	@Benchmarks/run.sh

# libFuzzer + AddressSanitizer over every parser, FUZZ_SECONDS each (default 60); the table lands in
# fuzz-output/summary.md. Crashes it finds become inputs in Tests/FilmstripFormatsTests/Fuzzing/Regressions.
fuzz: deps
	@Scripts/fuzz.sh

clean:
	rm -rf .build demo-output bench-output fuzz-output
