#!/usr/bin/env bash
# Builds nxrt and runs every test: the C/C++ suites (ctest), the ONNX backend node conformance cases, the Python
# checks against the onnx package,
# the same C/C++ suites under AddressSanitizer + UndefinedBehaviorSanitizer, and a short fuzz run.
# Set NXRT_SKIP_SANITIZE=1 or NXRT_SKIP_FUZZ=1 to leave those stages out locally.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

start=$(date +%s)
scripts/build.sh build
echo "== build: $(( $(date +%s) - start )) s"
(cd build && ctest --output-on-failure -j2)
scripts/install_python.sh

# Every ONNX backend node case; fails when a case listed in tests/conformance/expected_passing.txt regressed.
.venv/bin/python tests/conformance/run_conformance.py --cli build/nxrt --check

set +e
.venv/bin/python -m pytest -q tests/python
status=$?
set -e
# pytest exits 5 when it collected no test; that is not a failure of the suite.
if [[ $status -ne 0 && $status -ne 5 ]]; then exit $status; fi

if [[ "${NXRT_SKIP_SANITIZE:-0}" != 1 ]]; then
  start=$(date +%s)
  scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DNXRT_SANITIZE=ON
  echo "== sanitizer build: $(( $(date +%s) - start )) s"
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
     UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j2)
fi

if [[ "${NXRT_SKIP_FUZZ:-0}" != 1 && -x scripts/fuzz.sh ]]; then
  scripts/fuzz.sh "${NXRT_FUZZ_SECONDS:-30}"
fi
