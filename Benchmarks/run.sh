#!/usr/bin/env bash
# `make bench`: runs the release benchmark binary and keeps a copy of the report in bench-output/.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench-output
"$(swift build -c release --show-bin-path)/FilmstripBench" | tee bench-output/report.txt
