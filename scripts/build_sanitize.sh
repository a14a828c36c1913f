#!/usr/bin/env bash
# Configures and builds the sanitizer tree, build-asan/: GCC, Debug, AddressSanitizer and
# UndefinedBehaviorSanitizer, for the C/C++ test suites and the examples.
#   scripts/build_sanitize.sh [ninja targets...]     (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DNXRT_TEST_OPTIMIZATION=-O0 -DNXRT_SANITIZE=ON \
  -DNXRT_BUILD_TESTS=ON -DNXRT_BUILD_EXAMPLES=ON -DNXRT_BUILD_PYTHON=OFF --target "$@"
