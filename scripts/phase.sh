#!/usr/bin/env bash
# scripts/phase.sh NAME COMMAND...: run one phase of `make test` (install, lint, tests, ...),
# print how long it took and add a row to test-artifacts/times/phases.tsv, which
# scripts/test_times.py prints beside the tests' own table. Exits with COMMAND's code.
set -u
name="$1"
shift
mkdir -p test-artifacts/times
start=$(date +%s%N)
"$@"
code=$?
tenths=$((($(date +%s%N) - start) / 100000000))
seconds="$((tenths / 10)).$((tenths % 10))"
printf '[phase] %s: %s s (exit %d)\n' "$name" "$seconds" "$code" >&2
printf '%s\t%s\t%d\n' "$name" "$seconds" "$code" >> test-artifacts/times/phases.tsv
exit "$code"
