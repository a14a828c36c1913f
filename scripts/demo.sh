#!/usr/bin/env bash
# The main job: set up, build, and run the embedded default models, printing their outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh build
build/nxrt run
