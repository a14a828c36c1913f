#!/usr/bin/env bash
# Builds the nxrt wheel (pip install . through scikit-build-core, CMake tree build/wheel) and installs it into
# .venv, or into the Python given as the first argument. The wheel needs only numpy at run time.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${1:-.venv/bin/python}
if [[ ! -x $python ]]; then
  echo "install_python: $python is missing; run scripts/setup.sh test first, or pass a Python" >&2
  exit 1
fi
if ! $python -c "import nanobind, scikit_build_core, numpy" >/dev/null 2>&1; then
  echo "install_python: installing build requirements"
  $python -m pip install -q "nanobind>=2.0" "scikit-build-core>=0.10" -r requirements/runtime.txt
fi
start=$(date +%s)
CMAKE_BUILD_PARALLEL_LEVEL=${NXRT_JOBS:-2} $python -m pip install --no-build-isolation -q .
echo "== python package: $(( $(date +%s) - start )) s"
