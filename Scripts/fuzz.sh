#!/usr/bin/env bash
# `make fuzz`: builds one libFuzzer binary (AddressSanitizer + coverage) over FilmstripFormats' sources and fuzzes
# every parser for FUZZ_SECONDS each (default 60), or for FUZZ_RUNS executions each when set (FUZZ_MAX_LEN bounds an
# input, default 64 KiB), seeded with the test
# fixtures and with Fuzz/boundary.dict (boundary numbers, tags and attributes). The corpus grows across runs in
# fuzz-output/corpus; crashes land in fuzz-output/crashes/<target>/ (copy each into
# Tests/FilmstripFormatsTests/Fuzzing/Regressions/<target>/ once fixed). Prints and writes fuzz-output/summary.md
# (FUZZ_SUMMARY names another file; FUZZ_SKIP_BUILD=1 reuses the binary, so two runs over different FUZZ_TARGETS
# can share the two cores).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
runs=${FUZZ_RUNS:-}
max_len=${FUZZ_MAX_LEN:-65536}
# With FUZZ_RUNS, this many executions per target, capped at FUZZ_SECONDS when that is set too; else FUZZ_SECONDS.
if [ -n "$runs" ]; then
    budget=(-runs="$runs")
    [ -n "${FUZZ_SECONDS:-}" ] && budget+=(-max_total_time="$seconds")
else
    budget=(-max_total_time="$seconds")
fi
targets=${FUZZ_TARGETS:-webvtt fragment grid hls mpd bif sidx storyboard cmcd cmcd-roundtrip iframe-images transport-stream codec-string}
out=fuzz-output
bin=${FUZZ_BIN:-.build/fuzz/filmstrip-fuzz}
mkdir -p .build/fuzz "$out"

if [ -z "${FUZZ_SKIP_BUILD:-}" ]; then
    echo "building $bin (swiftc -sanitize=fuzzer,address)"
    # shellcheck disable=SC2046
    swiftc -sanitize=fuzzer,address -parse-as-library -O -swift-version 6 -D FILMSTRIP_FUZZ -module-name FilmstripFuzz -package-name filmstrip \
        $(find Sources/FilmstripFormats -name '*.swift' | sort) Tests/FilmstripFormatsTests/Fuzzing/FuzzTargets.swift \
        Tests/FilmstripFormatsTests/Fuzzing/FuzzSeeds.swift Fuzz/FuzzEntry.swift Fuzz/StructureMutator.swift \
        Sources/FilmstripTesting/TextMutation.swift -o "$bin" 2> "$out/build.log" || {
        grep -v "Cannot export local symbol" "$out/build.log"
        exit 1
    }
fi

export SWIFT_BACKTRACE=enable=no
summary=${FUZZ_SUMMARY:-$out/summary.md}
{
    echo "| target | seconds | executions | exec/s | edges covered | features | corpus | crashes |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|"
} > "$summary"
failed=0
for target in $targets; do
    seeds="$out/seeds/$target" corpus="$out/corpus/$target" crashes="$out/crashes/$target"
    rm -rf "$seeds"
    mkdir -p "$seeds" "$corpus" "$crashes"
    log="$out/$target.log"
    status=0
    started=$(date +%s)
    FILMSTRIP_FUZZ_TARGET=$target FILMSTRIP_FUZZ_SEEDS=$seeds "$bin" "$corpus" "$seeds" \
        "${budget[@]}" -dict=Fuzz/boundary.dict -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 -max_len="$max_len" \
        -artifact_prefix="$crashes/" > "$log" 2>&1 || status=$?
    elapsed=$(( $(date +%s) - started ))
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    coverage=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    features=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    corpus_size=$(find "$corpus" -type f | wc -l)
    found=$(find "$crashes" -type f | wc -l)
    echo "| $target | $elapsed | ${executions:-0} | ${rate:-0} | ${coverage:-0} | ${features:-0} | $corpus_size | $found |" \
        >> "$summary"
    if [ "$status" -ne 0 ] || [ "$found" -ne 0 ]; then
        failed=1
        echo "fuzz $target: exit $status, $found crash file(s) in $crashes; log: $log" >&2
        grep -E "Fatal error|ERROR: AddressSanitizer|ERROR: libFuzzer|SUMMARY" "$log" | head -5 >&2 || true
    fi
done
cat "$summary"
exit "$failed"
