#!/usr/bin/env bash
# `make fuzz`: builds one libFuzzer binary (AddressSanitizer + coverage) over FilmstripFormats' sources and fuzzes
# every parser for FUZZ_SECONDS each (default 60), seeded with the test fixtures. The corpus grows across runs in
# fuzz-output/corpus; crashes land in fuzz-output/crashes/<target>/ (copy each into
# Tests/FilmstripFormatsTests/Fuzzing/Regressions/<target>/ once fixed). Prints and writes fuzz-output/summary.md.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-webvtt fragment grid hls mpd bif sidx storyboard cmcd cmcd-roundtrip}
out=fuzz-output
bin=.build/fuzz/filmstrip-fuzz
mkdir -p .build/fuzz "$out"

echo "building $bin (swiftc -sanitize=fuzzer,address)"
# shellcheck disable=SC2046
swiftc -sanitize=fuzzer,address -parse-as-library -O -swift-version 6 -D FILMSTRIP_FUZZ -module-name FilmstripFuzz -package-name filmstrip \
    $(find Sources/FilmstripFormats -name '*.swift' | sort) Tests/FilmstripFormatsTests/Fuzzing/FuzzTargets.swift \
    Tests/FilmstripFormatsTests/Fuzzing/FuzzSeeds.swift Fuzz/FuzzEntry.swift -o "$bin" 2> "$out/build.log" || {
    grep -v "Cannot export local symbol" "$out/build.log"
    exit 1
}

export SWIFT_BACKTRACE=enable=no
summary="$out/summary.md"
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
    FILMSTRIP_FUZZ_TARGET=$target FILMSTRIP_FUZZ_SEEDS=$seeds "$bin" "$corpus" "$seeds" \
        -max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -artifact_prefix="$crashes/" > "$log" 2>&1 || status=$?
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    coverage=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    features=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    corpus_size=$(find "$corpus" -type f | wc -l)
    found=$(find "$crashes" -type f | wc -l)
    echo "| $target | $seconds | ${executions:-0} | ${rate:-0} | ${coverage:-0} | ${features:-0} | $corpus_size | $found |" \
        >> "$summary"
    if [ "$status" -ne 0 ] || [ "$found" -ne 0 ]; then
        failed=1
        echo "fuzz $target: exit $status, $found crash file(s) in $crashes; log: $log" >&2
        grep -E "Fatal error|ERROR: AddressSanitizer|ERROR: libFuzzer|SUMMARY" "$log" | head -5 >&2 || true
    fi
done
cat "$summary"
exit "$failed"
