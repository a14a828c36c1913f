#!/usr/bin/env bash
# Configures and builds the sanitizer tree, build-sanitize/: clang at -O1 with AddressSanitizer,
# UndefinedBehaviorSanitizer and libFuzzer coverage, so the same objects serve the sanitized test suites and the
# fuzz targets (one compile of the engine for both). The test sources themselves compile at -O0.
#   scripts/build_sanitize.sh [ninja targets...]     (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
CC=clang CXX=clang++ scripts/build.sh build-sanitize -DCMAKE_BUILD_TYPE=Debug \
  "-DCMAKE_C_FLAGS_DEBUG=-O1 -gline-tables-only" "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -gline-tables-only" \
  -DNXRT_TEST_OPTIMIZATION=-O0 -DNXRT_SANITIZE=ON -DNXRT_FUZZ=ON -DNXRT_BUILD_TESTS=ON -DNXRT_BUILD_EXAMPLES=ON \
  -DNXRT_BUILD_PYTHON=OFF -DNXRT_BUILD_FORTRAN=OFF --target "$@"
