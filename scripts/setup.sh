#!/usr/bin/env bash
# Installs what nxrt needs on Debian 12 (as root): build tools from apt, a project venv from PyPI.
# Idempotent and quick when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_packages=(cmake ninja-build g++ ccache libgtest-dev python3-venv clang gfortran openmpi-bin libopenmpi-dev valgrind pkgconf
              libpng-dev libjpeg62-turbo-dev libtiff-dev libwebp-dev libopenjp2-7-dev libopenblas-dev)
missing=()
for package in "${apt_packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [[ ! -x .venv/bin/python ]]; then
  echo "setup: creating .venv"
  python3 -m venv .venv
fi
if ! .venv/bin/python -c "import numpy, onnx, pytest, onnxruntime, nanobind, scikit_build_core, ml_dtypes, torch, jax, flax, equinox" >/dev/null 2>&1; then
  echo "setup: installing Python packages into .venv"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r requirements-dev.txt
fi
