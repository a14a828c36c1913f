#!/usr/bin/env bash
# Per-call overhead of nxrt's C API against onnxruntime's Python API on simple_add (4 floats), one thread each.
# usage: bench/capi_overhead.sh [BUILD_DIR] [CALLS]   (BUILD_DIR defaults to build; needs .venv with onnxruntime)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
calls=${2:-20000}
model=$(mktemp -d)/simple_add.onnx
"$build/nxrt" export-builtin simple_add "$model" >/dev/null
ninja -C "$build" nxrt_capi_overhead >/dev/null
echo "== nxrt C API ($calls calls x 15 rounds, median)"
"$build/examples/nxrt_capi_overhead" "$model" "$calls"
echo "== onnxruntime Python API, same model and machine"
.venv/bin/python - "$model" "$calls" <<'PY'
import statistics, sys, time
import numpy as np
import onnxruntime as ort
model, calls = sys.argv[1], int(sys.argv[2])
options = ort.SessionOptions()
options.intra_op_num_threads = 1
options.inter_op_num_threads = 1
session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
feeds = {"x": np.arange(1, 5, dtype=np.float32), "y": np.arange(10, 50, 10, dtype=np.float32)}
z = np.zeros(4, dtype=np.float32)
binding = session.io_binding()
binding.bind_cpu_input("x", feeds["x"])
binding.bind_cpu_input("y", feeds["y"])
binding.bind_output("z", "cpu", 0, np.float32, [4], z.ctypes.data)

def median_us(fn):
    rounds = []
    for _ in range(15):
        start = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        rounds.append((time.perf_counter_ns() - start) / calls / 1000.0)
    return statistics.median(rounds)

median_us(lambda: session.run(["z"], feeds))
print(f"run          {median_us(lambda: session.run(['z'], feeds)):.3f} us/call")
print(f"run_binding  {median_us(lambda: session.run_with_iobinding(binding)):.3f} us/call")
assert z[3] == 48.0, z
print(f"onnxruntime {ort.__version__}")
PY
