#!/usr/bin/env bash
# The test command of the README: install deps, build, run the suite; then
# rebuild with AddressSanitizer + UndefinedBehaviorSanitizer and rerun it,
# and build the Release configuration (-O3 inlines more and warns about
# more: -Werror must hold there too).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
bash scripts/test-python.sh   # pip install of the Python package and its acceptance script
if [[ "${IMPULSE_SKIP_SANITIZE:-0}" != 1 ]]; then
  cmake -S . -B build-san -DCMAKE_BUILD_TYPE=Debug -DIMPULSE_SANITIZE=ON >/dev/null
  cmake --build build-san -j"$(nproc)"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-san --output-on-failure -j"$(nproc)"
fi
if [[ "${IMPULSE_SKIP_RELEASE:-0}" != 1 ]]; then
  cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build-release -j"$(nproc)"
fi
