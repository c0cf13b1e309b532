#!/usr/bin/env bash
# Passes `go test -v` output through, ends it with a plain "N passed, N failed" line, and
# fails when a test was skipped: in an acceptance run every test must really run — a
# skipped acceptance test is not a passing one. (The test binary's own exit status reaches
# make through `set -o pipefail`.)
set -u
label=${1:-tests}
passed=0 failed=0 skipped=0
while IFS= read -r line; do
  printf '%s\n' "$line"
  case "$line" in
    # Top-level results only: subtests are indented.
    "--- PASS:"*) passed=$((passed + 1)) ;;
    "--- FAIL:"*) failed=$((failed + 1)) ;;
    "--- SKIP:"*) skipped=$((skipped + 1)) ;;
  esac
done
echo "$label: $passed passed, $failed failed, $skipped skipped"
if [ "$skipped" -gt 0 ]; then
  echo "testfilter: $skipped test(s) skipped in an acceptance run: that is a failure here" >&2
  exit 1
fi
if [ "$passed" -eq 0 ]; then
  echo "testfilter: no test ran" >&2
  exit 1
fi
