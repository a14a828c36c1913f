#!/usr/bin/env bash
# The main job: installs the compiler and build tools, builds only the library and the CLI, and runs the
# embedded default models, printing their outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
scripts/setup.sh cli
scripts/build.sh build -DNXRT_BUILD_TESTS=OFF -DNXRT_BUILD_EXAMPLES=OFF -DNXRT_BUILD_BENCH=OFF \
  -DNXRT_BUILD_PYTHON=OFF -DNXRT_BUILD_FORTRAN=OFF --target nxrt_cli
build/nxrt run
echo "== demo: $(( $(date +%s) - start )) s"
