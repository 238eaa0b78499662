#!/usr/bin/env bash
# Runs each cargo-fuzz target for a set time (default 60 s each): `scripts/fuzz.sh [seconds] [target…]`.
# A crash or hang fails the script; its input is copied to fuzz/regressions/<target>/, which
# `cargo test` (tests/fuzz_regressions.rs) replays from then on.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(api_response schema_and_input run_request)

command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
# cargo-fuzz needs nightly-only flags (-Zsanitizer); the machine has one stable toolchain, which
# accepts them with RUSTC_BOOTSTRAP=1.
export RUSTC_BOOTSTRAP=1

status=0
for target in "${targets[@]}"; do
  corpus=fuzz/corpus/$target
  mkdir -p "$corpus" "fuzz/regressions/$target"
  cp -n fuzz/seeds/"$target"/* "$corpus"/ 2>/dev/null || true
  echo "== fuzzing $target for ${seconds}s"
  if ! cargo fuzz run "$target" "$corpus" -- -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096; then
    status=1
  fi
  for found in fuzz/artifacts/"$target"/*; do
    [ -e "$found" ] || continue
    echo "found: $found (kept in fuzz/regressions/$target/)"
    cp "$found" "fuzz/regressions/$target/"
    status=1
  done
done
exit $status
