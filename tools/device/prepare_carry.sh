#!/usr/bin/env bash
# Prepares build-device/ (git-ignored) for the device machine checks in tools/device/, which run on a machine with
# Python 3.12 but no libre2, pkg-config or scikit-build-core: carry build-device there.
#   tools/device/prepare_carry.sh   then run e.g. `bash build-device/abi3_check.sh` with carry ["build-device"]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=build-device
rm -rf "$out" && mkdir -p "$out"/pylib "$out"/re2/lib/pkgconfig "$out"/re2/include "$out"/bin
tmp=$(mktemp -d)
.venv/bin/python -m pip download -q --no-deps -d "$tmp" scikit-build-core pathspec packaging nanobind
for wheel in "$tmp"/*.whl; do (cd "$out"/pylib && python3 -m zipfile -e "$wheel" .); done
cp -r /usr/include/re2 "$out"/re2/include/
cp -a /usr/lib/x86_64-linux-gnu/libre2.so* /usr/lib/x86_64-linux-gnu/libpkgconf.so.3* "$out"/re2/lib/
{ echo 'prefix=${pcfiledir}/../..'; sed -e 's|^libdir=.*|libdir=${prefix}/lib|' -e 's|^includedir=.*|includedir=${prefix}/include|' \
    /usr/lib/x86_64-linux-gnu/pkgconfig/re2.pc; } > "$out"/re2/lib/pkgconfig/re2.pc
cp /usr/bin/pkgconf "$out"/bin/pkg-config
cp tools/device/*.sh tools/device/segv.c tools/device/failed_run_then_bad_bytes.py "$out"/
