"""Per-op-type time of one benchmark model in nxrt and onnxruntime, side by side.

    python bench/real/profile.py --model "PP-OCRv4 det" [--suite real|synthetic|contrib] [--threads 1] [--runs 20]
        [--isa avx2] [--out FILE.md]

Both runtimes profile the same runs through their own profilers (``SessionOptions.enable_profiling``); the node
events of each trace are summed per op type and divided by the number of runs (warm-up runs included: neither
profiler can be paused). Op types differ where the optimisers fuse differently (onnxruntime's ``FusedConv`` against nxrt's
fused Conv, for one), so the table lists every op type either runtime reports, and the totals are the sum of node
time, not the wall time of a run (which the table also gives, measured without profiling).
"""

import argparse
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "suite"))
from run import cpu_model, load_suite  # noqa: E402


def node_times(trace_path, runs):
    """(op type -> (ms per run, node count), node -> (op type, ms per run)) from a Chrome-trace profile of ``runs``
    runs."""
    with open(trace_path) as handle:
        events = json.load(handle)
    total_us, nodes = defaultdict(float), defaultdict(set)
    node_us, node_op = defaultdict(float), {}
    for event in events:
        if event.get("cat") != "Node" or not event.get("name", "").endswith("_kernel_time"):
            continue
        op_type = event.get("args", {}).get("op_name", "?")
        name = event["name"][:-len("_kernel_time")]
        total_us[op_type] += float(event.get("dur", 0))
        nodes[op_type].add(name)
        node_us[name] += float(event.get("dur", 0))
        node_op[name] = op_type
    per_type = {op: (total_us[op] / 1000.0 / runs, len(nodes[op])) for op in total_us}
    per_node = {name: (node_op[name], node_us[name] / 1000.0 / runs) for name in node_us}
    return per_type, per_node


def profile(runtime, case, threads, runs, warmup):
    options = runtime.SessionOptions()
    options.intra_op_num_threads = threads
    options.enable_profiling = True
    options.log_severity_level = 3  # onnxruntime warns on every run of models whose declared output shapes differ
    with tempfile.TemporaryDirectory() as directory:
        options.profile_file_prefix = os.path.join(directory, "profile")
        session = runtime.InferenceSession(case.model, options, providers=["CPUExecutionProvider"])
        # The profilers cannot be paused: warm-up runs are in the trace too, and every run counts in the mean.
        for _ in range(warmup):
            session.run(None, case.feeds)
        for _ in range(runs):
            session.run(None, case.feeds)
        trace = session.end_profiling()
        times = node_times(trace if os.path.isabs(trace) else os.path.join(os.getcwd(), trace), warmup + runs)
        if not os.path.isabs(trace) and os.path.exists(trace):
            os.remove(trace)
    return times


def wall_ms(runtime, case, threads, runs):
    options = runtime.SessionOptions()
    options.intra_op_num_threads = threads
    options.log_severity_level = 3
    session = runtime.InferenceSession(case.model, options, providers=["CPUExecutionProvider"])
    for _ in range(3):
        session.run(None, case.feeds)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        session.run(None, case.feeds)
        samples.append((time.perf_counter() - start) * 1000.0)
    samples.sort()
    return samples[len(samples) // 2]


def slowest_nodes(label, per_node, count):
    lines = [f"{label}, the {count} slowest nodes:", "", "| node | op type | ms |", "|---|---|---:|"]
    for name, (op, ms) in sorted(per_node.items(), key=lambda item: -item[1][1])[:count]:
        lines.append(f"| {name[:80]} | {op} | {ms:.3f} |")
    return "\n".join(lines) + "\n"


def table(case, threads, nxrt_times, ort_times, nxrt_wall, ort_wall, tier):
    lines = [f"# {case.name}: time per op type, nxrt ({tier}) and onnxruntime, {threads} thread(s)", "",
             f"Wall time per run (median, no profiling): nxrt {nxrt_wall:.2f} ms, onnxruntime {ort_wall:.2f} ms "
             f"(ratio {nxrt_wall / ort_wall:.2f}).", "",
             "| op type | nxrt ms | nxrt nodes | ORT ms | ORT nodes |", "|---|---:|---:|---:|---:|"]
    ops = sorted(set(nxrt_times) | set(ort_times),
                 key=lambda op: -max(nxrt_times.get(op, (0, 0))[0], ort_times.get(op, (0, 0))[0]))
    for op in ops:
        n_ms, n_count = nxrt_times.get(op, (0.0, 0))
        o_ms, o_count = ort_times.get(op, (0.0, 0))
        lines.append(f"| {op} | {n_ms:.3f} | {n_count} | {o_ms:.3f} | {o_count} |")
    lines.append(f"| **sum of nodes** | **{sum(v[0] for v in nxrt_times.values()):.3f}** | "
                 f"{sum(v[1] for v in nxrt_times.values())} | **{sum(v[0] for v in ort_times.values()):.3f}** | "
                 f"{sum(v[1] for v in ort_times.values())} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="a case whose name contains this text")
    parser.add_argument("--suite", choices=["real", "synthetic", "contrib", "ml"], default="real",
                        help="the case list of bench/suite/run.py to pick from (default: real)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--isa", choices=["generic", "avx2", "avx512"], help="nxrt's CPU tier (NXRT_CPU_ISA)")
    parser.add_argument("--nodes", type=int, default=0,
                        help="also list each runtime's slowest nodes (layers), this many (node names differ: each "
                             "optimiser fuses and names its own)")
    parser.add_argument("--out", help="also write the table to this markdown file")
    args = parser.parse_args()
    if args.isa:
        os.environ["NXRT_CPU_ISA"] = args.isa
    import nxrt
    import onnxruntime

    cases = [case for case in load_suite(args.suite) if args.model in case.name]
    if not cases:
        parser.error(f"no case name of that suite contains {args.model!r}")
    output = []
    for case in cases:
        nxrt_times, nxrt_nodes = profile(nxrt, case, args.threads, args.runs, args.warmup)
        ort_times, ort_nodes = profile(onnxruntime, case, args.threads, args.runs, args.warmup)
        nxrt_wall = wall_ms(nxrt, case, args.threads, args.runs)
        ort_wall = wall_ms(onnxruntime, case, args.threads, args.runs)
        output.append(table(case, args.threads, nxrt_times, ort_times, nxrt_wall, ort_wall,
                            args.isa or "detected tier"))
        if args.nodes > 0:
            output.append(slowest_nodes("nxrt", nxrt_nodes, args.nodes))
            output.append(slowest_nodes("onnxruntime", ort_nodes, args.nodes))
    header = (f"Command: `python bench/real/profile.py {' '.join(sys.argv[1:])}`\n\n"
              f"Machine: {cpu_model()}, {os.cpu_count()} CPUs; {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}. "
              f"nxrt {nxrt.__version__} at {args.isa or 'its detected tier'}, onnxruntime {onnxruntime.__version__} "
              f"on its own kernels. Times are per run, from each runtime's profiler, averaged over "
              f"{args.runs + args.warmup} runs.\n\n")
    text = header + "\n".join(output)
    print(text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
