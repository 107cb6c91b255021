#!/usr/bin/env bash
# The test command of the README: install deps, build, run the suite; then
# rebuild with AddressSanitizer + UndefinedBehaviorSanitizer and rerun it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
if [[ "${IMPULSE_SKIP_SANITIZE:-0}" != 1 ]]; then
  cmake -S . -B build-san -DCMAKE_BUILD_TYPE=Debug -DIMPULSE_SANITIZE=ON >/dev/null
  cmake --build build-san -j"$(nproc)"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-san --output-on-failure -j"$(nproc)"
fi
