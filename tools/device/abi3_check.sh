#!/usr/bin/env bash
# Copied into build-device/ by tools/device/prepare_carry.sh; run there on the device machine.
# Device check: builds the wheel with Python 3.12 (abi3 expected), installs it into a fresh venv, runs tests.
cd "$(dirname "$0")/.."
D=$PWD/build-device
export PATH=$D/bin:$PATH PKG_CONFIG_PATH=$D/re2/lib/pkgconfig LD_LIBRARY_PATH=$D/re2/lib PYTHONPATH=$D/pylib
export CMAKE_BUILD_PARALLEL_LEVEL=16
PY=$(command -v python3.12 || command -v python3)
echo "python: $PY $($PY --version)"; nproc; which g++ cmake ninja ccache pkg-config
$PY -c "import numpy, nanobind, scikit_build_core; print('numpy', numpy.__version__, 'nanobind', nanobind.__version__, 'skbuild', scikit_build_core.__version__)"
$PY -c "import onnx, pytest; print('onnx', onnx.__version__, 'pytest', pytest.__version__)" || echo "no onnx/pytest"
$PY -c "import xdist; print('xdist')" || true
start=$(date +%s)
$PY -m pip wheel --no-build-isolation --no-deps -w "$OUT/dist" . > "$OUT/wheel.log" 2>&1; echo "wheel rc=$? in $(( $(date +%s)-start )) s"
tail -5 "$OUT/wheel.log"; ls "$OUT/dist"
whl=$(ls "$OUT"/dist/*.whl | head -1)
$PY -m pip install -q --no-index --no-deps --target /tmp/site "$whl" && echo installed
cd /tmp && PYTHONPATH=/tmp/site $PY -c "import nxrt, sys; print(nxrt.__file__, nxrt.__version__ if hasattr(nxrt,'__version__') else ''); import glob, os; print(glob.glob(os.path.dirname(nxrt.__file__)+'/_nxrt*'))"
cd - >/dev/null
n=1; xflag=(); $PY -c "import xdist" 2>/dev/null && { n=12; xflag=(-n 12); }
sel=tests/python; [[ $n == 1 ]] && sel="tests/python/test_python_api.py tests/python/test_dlpack_and_dtypes.py tests/python/test_eager_ops.py"
PYTHONPATH=/tmp/site timeout 200 $PY -m pytest -q -p no:cacheprovider "${xflag[@]}" $sel --deselect tests/python/test_wheel.py 2>&1 | tail -25
