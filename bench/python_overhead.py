"""Per-call overhead from Python: nxrt vs onnxruntime on the builtin simple_add model (B=4), same process.

Both sessions use one intra-op thread; calls are interleaved in rounds so that machine noise hits both alike.
Prints the median time per call of each API and the ratio onnxruntime / nxrt.

    .venv/bin/python bench/python_overhead.py [--rounds 30] [--calls 2000]
"""

import argparse
import statistics
import time

import numpy as np

import nxrt


def time_calls(fn, calls):
    start = time.perf_counter_ns()
    for _ in range(calls):
        fn()
    return (time.perf_counter_ns() - start) / calls / 1000.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()

    import onnxruntime

    model = nxrt.builtin_model("simple_add")
    x = np.arange(4, dtype=np.float32)
    y = np.ones(4, dtype=np.float32)
    feed = {"x": x, "y": y}

    nx_options = nxrt.SessionOptions()
    nx_options.intra_op_num_threads = 1
    nx = nxrt.InferenceSession(model, nx_options)
    ort_options = onnxruntime.SessionOptions()
    ort_options.intra_op_num_threads = 1
    ort_options.inter_op_num_threads = 1
    ort = onnxruntime.InferenceSession(model, ort_options, providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(nx.run(None, feed)[0], ort.run(None, feed)[0])

    cases = {
        "nxrt run(None, feed)": lambda: nx.run(None, feed),
        "nxrt session(x, y)": lambda: nx(x, y),
        "onnxruntime run(None, feed)": lambda: ort.run(None, feed),
    }
    samples = {name: [] for name in cases}
    for fn in cases.values():
        time_calls(fn, args.calls // 4)
    for _ in range(args.rounds):
        for name, fn in cases.items():
            samples[name].append(time_calls(fn, args.calls))

    medians = {name: statistics.median(values) for name, values in samples.items()}
    ort_median = medians["onnxruntime run(None, feed)"]
    print(f"simple_add B=4, 1 thread, {args.rounds} rounds x {args.calls} calls (median us/call)")
    print(f"{'api':32s} {'us/call':>9s} {'ort/this':>9s}")
    for name, median in medians.items():
        print(f"{name:32s} {median:9.2f} {ort_median / median:9.2f}x")


if __name__ == "__main__":
    main()
