#!/usr/bin/env bash
# Configures and builds the sanitizer tree, build-asan/: clang, Debug (-O0), AddressSanitizer +
# UndefinedBehaviorSanitizer + libFuzzer coverage on every object, for the C/C++ test suites, the examples and
# the fuzz targets (fuzz/), so CI compiles the engine once for both. -O0: clang's instrumented -O1 compiles the
# engine about 2.6 times slower, more than the suites' run time gains back.
#   scripts/build_sanitize.sh [ninja targets...]     (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
# Line tables are all the sanitizers' reports need (full -g: larger objects, slower links).
CC=clang CXX=clang++ scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DNXRT_TEST_OPTIMIZATION=-O0 \
  "-DCMAKE_C_FLAGS_DEBUG=-O0 -gline-tables-only" "-DCMAKE_CXX_FLAGS_DEBUG=-O0 -gline-tables-only" \
  -DNXRT_SANITIZE=ON -DNXRT_FUZZ=ON -DNXRT_BUILD_TESTS=ON -DNXRT_BUILD_EXAMPLES=ON -DNXRT_BUILD_PYTHON=OFF \
  --target "$@"
