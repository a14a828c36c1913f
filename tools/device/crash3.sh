#!/usr/bin/env bash
# Copied into build-device/ by tools/device/prepare_carry.sh; run there on the device machine.
cd "$(dirname "$0")/.."
D=$PWD/build-device
export PATH=$D/bin:$PATH PKG_CONFIG_PATH=$D/re2/lib/pkgconfig LD_LIBRARY_PATH=$D/re2/lib CMAKE_BUILD_PARALLEL_LEVEL=16
PY=$(command -v python3.12)
gcc -shared -fPIC -O1 -o /tmp/libsegv.so $D/segv.c
s=$(date +%s)
PYTHONPATH=$D/pylib $PY -m pip wheel --no-build-isolation --no-deps -w /tmp/dist . -Cbuild-dir=/tmp/wb -Ccmake.build-type=RelWithDebInfo > "$OUT/wheel.log" 2>&1
echo "wheel rc=$? $(( $(date +%s)-s )) s"; $PY -m pip install -q --no-index --no-deps --target /tmp/site /tmp/dist/*.whl
cp /tmp/site/nxrt/_nxrt*.so $OUT/
cd /tmp && PYTHONPATH=/tmp/site LD_PRELOAD=/tmp/libsegv.so timeout 60 $PY $D/failed_run_then_bad_bytes.py 2>&1 | tail -40
grep -m3 "_nxrt" /proc/self/maps >/dev/null; echo done
