#!/usr/bin/env bash
# Builds and installs the nxrt Python package into .venv (pip install . with scikit-build-core; the CMake
# build lives in build-python, so a rebuild only recompiles what changed). Skips everything when no input
# changed since the last successful install. Needs scripts/setup.sh to have created .venv.
set -euo pipefail
cd "$(dirname "$0")/.."
python=.venv/bin/python
if [[ ! -x $python ]]; then
  echo "install_python: .venv is missing; run scripts/setup.sh first" >&2
  exit 1
fi
if ! $python -c "import nanobind, scikit_build_core, numpy" >/dev/null 2>&1; then
  echo "install_python: installing build requirements into .venv"
  $python -m pip install -q -r requirements-dev.txt
fi

stamp=build-python/.nxrt-install-stamp
inputs_hash=$(
  { find src python cmake -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.py' -o -name '*.txt' -o -name '*.cmake' \) \
      -not -path '*/__pycache__/*' -print0 2>/dev/null | sort -z | xargs -0 sha1sum
    sha1sum CMakeLists.txt pyproject.toml; } | sha1sum | cut -d' ' -f1
)
if [[ -f $stamp && "$(cat "$stamp")" == "$inputs_hash" ]] && $python -c "import nxrt" >/dev/null 2>&1; then
  exit 0
fi
start=$(date +%s)
CMAKE_BUILD_PARALLEL_LEVEL=${NXRT_JOBS:-2} $python -m pip install --no-build-isolation --no-deps -q .
mkdir -p build-python
echo "$inputs_hash" >"$stamp"
echo "== python package: $(( $(date +%s) - start )) s"
