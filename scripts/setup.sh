#!/usr/bin/env bash
# Installs what nxrt needs on Debian 12 (as root). Idempotent, and quick when everything is already there.
#   scripts/setup.sh cli    compiler and build tools for the library and the CLI (the main command)
#   scripts/setup.sh build  also the test tools from apt, and the project venv .venv with what configuring and
#                           building the Python extension needs (requirements/build.txt)
#   scripts/setup.sh test   also the rest of the test packages from PyPI (requirements/test.txt and
#                           requirements/heavy.txt); scripts/test.sh runs this part while build/ compiles
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-test}

apt_packages=(cmake ninja-build g++ ccache pkgconf libre2-dev libcpp-httplib-dev nlohmann-json3-dev)
if [[ $mode == build || $mode == test ]]; then
  # clang: the sanitizer and fuzz tree; gfortran, Open MPI: the Fortran and MPI examples; valgrind: the C
  # examples' leak check; image libraries: ImageDecoder's codecs; nginx: the nxrt serve scale-out test.
  apt_packages+=(libgtest-dev python3-venv python3-dev clang gfortran openmpi-bin libopenmpi-dev valgrind nginx
                 libpng-dev libjpeg62-turbo-dev libtiff-dev libwebp-dev libopenjp2-7-dev)
elif [[ $mode != cli ]]; then
  echo "usage: scripts/setup.sh [cli|build|test]" >&2
  exit 2
fi
missing=()
for package in "${apt_packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

[[ $mode == cli ]] && exit 0
if [[ ! -x .venv/bin/python ]]; then
  echo "setup: creating .venv"
  python3 -m venv .venv
fi
if ! .venv/bin/python -c "import numpy, nanobind, scikit_build_core" >/dev/null 2>&1; then
  echo "setup: installing the build's Python packages into .venv"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r requirements/build.txt
fi
[[ $mode == build ]] && exit 0
test_modules="onnx, pytest, xdist, onnxruntime, ml_dtypes, openai, torch, jax, flax, equinox, transformers, onnxruntime_genai"
if ! .venv/bin/python -c "import ${test_modules}" >/dev/null 2>&1; then
  echo "setup: installing the test packages into .venv"
  .venv/bin/python -m pip install -q -r requirements/test.txt -r requirements/heavy.txt
fi
