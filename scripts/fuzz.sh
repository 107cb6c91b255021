#!/usr/bin/env bash
# Run the libFuzzer harnesses (tests/fuzz/fuzz_*.c) under ASan + UBSan
# (clang, with float-cast-overflow), each for a fixed time, one after the
# other; fail on any crash, sanitizer report, leak, timeout or out-of-memory.
#
#   scripts/fuzz.sh [--seconds N] [--build DIR] [HARNESS...]
#
# --seconds N   time per harness (default 600: the local run; CI uses 60)
# --build DIR   an existing build with -DIMPULSE_SANITIZE=ON -DIMPULSE_FUZZ=ON
#               (default: configure and build build-fuzz/ with clang)
# HARNESS       npz json system checkpoint trajectory mat import hdf5
#               train_state plan plot_log (default: all)
#
# Seeds come from tests/fuzz/corpus/<harness> and are not modified: new
# inputs go to build-fuzz/corpus/<harness>; a crashing input is written to
# build-fuzz/artifacts/ and the script exits non-zero. Runs at nice 19.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=600
build=""
harnesses=()
while (($#)); do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) harnesses+=("$1"); shift ;;
  esac
done
((${#harnesses[@]})) || harnesses=(npz json system checkpoint trajectory mat import hdf5 train_state plan plot_log)
if [[ -z "$build" ]]; then
  build=build-fuzz
  CC=clang cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIMPULSE_SANITIZE=ON -DIMPULSE_FUZZ=ON \
    -DIMPULSE_BENCH=OFF >/dev/null
fi
targets=()
for h in "${harnesses[@]}"; do targets+=(--target "fuzz_$h"); done
cmake --build "$build" -j"$(nproc)" "${targets[@]}"
work="$build/corpus"
artifacts="$build/artifacts"
mkdir -p "$artifacts"
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$PWD/tests/fuzz/lsan.supp:print_suppressions=0"
export OPENBLAS_NUM_THREADS=1
failed=0
for h in "${harnesses[@]}"; do
  mkdir -p "$work/$h"
  log="$build/fuzz_$h.log"
  # -rss_limit_mb: the acceptance bound of 2 GB; -timeout: one input may take 30 s
  if nice -n 19 "$build/fuzz_$h" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=30 \
       -print_final_stats=1 -artifact_prefix="$artifacts/$h-" "$work/$h" "tests/fuzz/corpus/$h" >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1)
    echo "fuzz_$h: ok, $runs executions in ${seconds} s ($cov)"
  else
    echo "fuzz_$h: FAILED (log $log; inputs in $artifacts)"
    grep -E "ERROR|runtime error|SUMMARY|Test unit written" "$log" | head -5 || true
    failed=1
  fi
done
exit "$failed"
