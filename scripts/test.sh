#!/usr/bin/env bash
# The test command of the README: install deps; build with gcc and run the
# suite; build with clang (the same warnings as errors) and run it; rebuild
# with clang's AddressSanitizer + UndefinedBehaviorSanitizer (with
# float-cast-overflow) and rerun it; build the Release configuration (-O3
# inlines more and warns about more: -Werror must hold there too); then run
# each libFuzzer harness for a short fixed time (scripts/fuzz.sh).
# IMPULSE_SKIP_CLANG=1, IMPULSE_SKIP_SANITIZE=1, IMPULSE_SKIP_RELEASE=1 and
# IMPULSE_SKIP_FUZZ=1 skip a stage; IMPULSE_FUZZ_SECONDS (default 60) sets
# the time per harness.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
bash scripts/test-python.sh   # pip install of the Python package and its acceptance script
if [[ "${IMPULSE_SKIP_CLANG:-0}" != 1 ]]; then
  CC=clang cmake -S . -B build-clang -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build-clang -j"$(nproc)"
  ctest --test-dir build-clang --output-on-failure -j"$(nproc)"
fi
if [[ "${IMPULSE_SKIP_SANITIZE:-0}" != 1 ]]; then
  # clang: its UBSan has float-cast-overflow and its runtime has libFuzzer,
  # so the same build runs the suite and the fuzz harnesses. -O1, as the
  # AddressSanitizer documentation advises (measured on 2 cores: at -O0
  # test_chnn_substeps alone took 117 s, at -O1 the whole suite 116 s)
  CC=clang cmake -S . -B build-san-clang -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O1 -g" \
    -DIMPULSE_SANITIZE=ON -DIMPULSE_FUZZ=ON >/dev/null
  cmake --build build-san-clang -j"$(nproc)"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-san-clang --output-on-failure -j"$(nproc)"
  if [[ "${IMPULSE_SKIP_FUZZ:-0}" != 1 ]]; then
    bash scripts/fuzz.sh --build build-san-clang --seconds "${IMPULSE_FUZZ_SECONDS:-60}"
  fi
fi
if [[ "${IMPULSE_SKIP_RELEASE:-0}" != 1 ]]; then
  cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build-release -j"$(nproc)"
fi
