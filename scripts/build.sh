#!/usr/bin/env bash
# Configures and builds nxrt in one CMake tree.
#   scripts/build.sh [build-dir] [cmake -D options...] [--target T...]
# Everything after --target names the ninja targets (default: all).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
shift || true
cmake_args=()
targets=()
while (($#)); do
  if [[ $1 == --target ]]; then
    shift
    targets=("$@")
    break
  fi
  cmake_args+=("$1")
  shift
done
# GCC by the name pip's wheel build uses too, so ccache can share objects between build/ and the wheel's tree.
export CC=${CC:-gcc} CXX=${CXX:-g++}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${cmake_args[@]}" >/dev/null
ninja -C "$build_dir" -j"${NXRT_JOBS:-2}" "${targets[@]}"
