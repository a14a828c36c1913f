"""nxrt vs onnxruntime on CPU, side by side: latency, session creation time and peak memory on a model suite.

    .venv/bin/python bench/suite/run.py [--suite real] [--quick] [--threads 1 2] [--isa avx2] [--out DIR]
                                        [--only NAME]

For every model of the suite (``models.py``, or with ``--suite real`` the PyPI-packaged models of
bench/real/models.py) and every thread count, both runtimes load the same serialized model in this
process (intra-op threads = t, onnxruntime with one inter-op thread and CPUExecutionProvider), their outputs are
compared with allclose, and their ``run(None, feeds)`` calls are timed in interleaved rounds so that machine noise
hits both alike. Peak RSS is measured per (model, runtime) in a fresh child process (see README.md). Results go to
``results.md``, ``results.json`` and ``ratios.png`` under ``--out`` (default bench/results[/real][/<tier>]; ``--isa``
runs nxrt at that CPU tier through NXRT_CPU_ISA; onnxruntime picks its own kernels).
"""

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LAUNCHER_CODE = """
import json, subprocess, sys
for line in sys.stdin:
    child = subprocess.run(json.loads(line), capture_output=True, text=True)
    print(json.dumps([child.returncode, child.stdout, child.stderr]), flush=True)
"""


def start_launcher():
    """Starts the small process that spawns the peak-RSS children.

    Linux carries ru_maxrss across fork (the child starts at the parent's current RSS) and execve, so a child
    spawned by this process, which holds every model and two runtimes, would report this process's size. The
    launcher is forked while this process is still a bare interpreter, so the floor it passes on is ~10 MB.
    """
    return subprocess.Popen([sys.executable, "-I", "-c", LAUNCHER_CODE], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)


def isa_from_argv(argv):
    """The --isa value, read before argparse: NXRT_CPU_ISA must be set before nxrt loads and before the launcher
    forks (the peak-RSS children inherit it)."""
    for i, arg in enumerate(argv):
        if arg == "--isa" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--isa="):
            return arg.split("=", 1)[1]
    return None


ISA = isa_from_argv(sys.argv)
if ISA:
    os.environ["NXRT_CPU_ISA"] = ISA

LAUNCHER = start_launcher() if __name__ == "__main__" and "--rss-child" not in sys.argv else None

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import models  # noqa: E402
import report  # noqa: E402

RUNTIMES = ("nxrt", "ort")
RSS_THREADS = 1
RSS_RUNS = 3


def first_line(error):
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0][:160]


# Graph optimization level of both runtimes ("all": their defaults; "extended": ORT_ENABLE_EXTENDED, which leaves
# out the layout passes such as NCHWc), set from --opt-level (passed on to the peak-RSS children in their argv).
OPT_LEVEL_ENV = "NXRT_BENCH_OPT_LEVEL"


def apply_opt_level(runtime_module, options):
    if os.environ.get(OPT_LEVEL_ENV, "all") == "extended":
        options.graph_optimization_level = runtime_module.GraphOptimizationLevel.ORT_ENABLE_EXTENDED


def make_session(runtime, model, threads):
    """Creates a session of ``runtime`` on the serialized ``model``; returns (session, creation ms)."""
    if runtime == "nxrt":
        import nxrt

        options = nxrt.SessionOptions()
        options.intra_op_num_threads = threads
        apply_opt_level(nxrt, options)
        start = time.perf_counter()
        session = nxrt.InferenceSession(model, options)
    else:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # errors only: some packaged models declare output shapes they do not produce
        apply_opt_level(onnxruntime, options)
        start = time.perf_counter()
        session = onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    return session, (time.perf_counter() - start) * 1000.0


def compare(case, got, want):
    """Returns None when every output of nxrt matches onnxruntime's within the case's tolerances, else a note."""
    if len(got) != len(want):
        return f"mismatch: {len(got)} vs {len(want)} outputs"
    for index, (a, b) in enumerate(zip(got, want)):
        if isinstance(b, list) and b and isinstance(b[0], dict):  # ZipMap's rows: keys in order, then the values
            if not isinstance(a, list) or [list(row) for row in a] != [list(row) for row in b]:
                return f"mismatch: output {index} map keys differ"
            a, b = [list(row.values()) for row in a], [list(row.values()) for row in b]
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return f"mismatch: output {index} shape {a.shape} vs {b.shape}"
        scale = max(1.0, float(np.max(np.abs(b)))) if b.size else 1.0
        if not np.allclose(a, b, rtol=case.rtol, atol=case.atol * scale, equal_nan=True):
            error = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))
            return f"mismatch: output {index} max abs err {error:.3g}"
    return None


def time_calls(session, feeds, calls):
    start = time.perf_counter_ns()
    for _ in range(calls):
        session.run(None, feeds)
    return (time.perf_counter_ns() - start) / calls / 1e6


def bench_case(case, threads, settings):
    """One table row: both runtimes on ``case`` with ``threads`` intra-op threads."""
    row = {"model": case.name, "threads": threads}
    sessions, outputs = {}, {}
    for runtime in RUNTIMES:
        try:
            creations = []
            for _ in range(settings["creates"]):
                session, ms = make_session(runtime, case.model, threads)
                creations.append(ms)
            outputs[runtime] = session.run(None, case.feeds)
            sessions[runtime] = session
            row[f"{runtime}_create_ms"] = statistics.median(creations)
        except Exception as error:  # a runtime that cannot load or run the model is a result, not a crash
            row[f"{runtime}_error"] = first_line(error)
    if len(sessions) == 2:
        row["check"] = compare(case, outputs["nxrt"], outputs["ort"]) or "ok"

    calls = {}
    for runtime, session in sessions.items():
        # The first calls are cold (arena growth, page faults); size the rounds from warm ones so each round
        # really lasts about target_ms.
        warm = statistics.median(time_calls(session, case.feeds, 1) for _ in range(5))
        calls[runtime] = max(1, int(settings["target_ms"] / max(warm, 1e-3)))
    samples = {runtime: [] for runtime in sessions}
    order = list(sessions)
    for round_index in range(settings["rounds"]):
        for runtime in order if round_index % 2 == 0 else reversed(order):
            # onnxruntime's pool threads keep spinning ~50 ms after its last run (measured on the 2-core machine);
            # the pause lets them park so they do not steal a core from the next round.
            time.sleep(settings["pause_s"])
            try:
                samples[runtime].append(time_calls(sessions[runtime], case.feeds, calls[runtime]))
            except Exception as error:
                row[f"{runtime}_error"] = first_line(error)
    for runtime, values in samples.items():
        if values and f"{runtime}_error" not in row:
            row[f"{runtime}_ms"] = statistics.median(values)
            row[f"{runtime}_calls_per_round"] = calls[runtime]
    if "nxrt_ms" in row and "ort_ms" in row:
        row["ratio"] = row["nxrt_ms"] / row["ort_ms"]
    return row


def peak_rss_child(runtime, model_path, feeds_path, threads):
    """Child-process body: prints the peak RSS (MB) before and after creating a session and running it."""
    kib_to_mb = 1024.0 / 1e6 if sys.platform != "darwin" else 1.0 / 1e6
    feeds = dict(np.load(feeds_path))
    model = Path(model_path).read_bytes()
    if runtime == "nxrt":
        import nxrt  # noqa: F401
    else:
        import onnxruntime  # noqa: F401
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * kib_to_mb
    session, _ = make_session(runtime, model, threads)
    for _ in range(RSS_RUNS):
        session.run(None, feeds)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * kib_to_mb
    print(json.dumps({"baseline_mb": baseline, "peak_mb": peak}))


def measure_peak_rss(case, workdir):
    """Runs one child per runtime on ``case``; returns {runtime: {"peak_mb", "baseline_mb"} or {"error"}}."""
    model_path = Path(workdir) / "model.onnx"
    feeds_path = Path(workdir) / "feeds.npz"
    model_path.write_bytes(case.model)
    np.savez(feeds_path, **case.feeds)
    result = {}
    for runtime in RUNTIMES:
        command = [sys.executable, str(Path(__file__).resolve()), "--rss-child", runtime, str(model_path),
                   str(feeds_path), str(RSS_THREADS), os.environ.get(OPT_LEVEL_ENV, "all")]
        LAUNCHER.stdin.write(json.dumps(command) + "\n")
        LAUNCHER.stdin.flush()
        returncode, stdout, stderr = json.loads(LAUNCHER.stdout.readline())
        lines = stdout.strip().splitlines()
        if returncode == 0 and lines:
            result[runtime] = json.loads(lines[-1])
        else:
            error_lines = [line for line in stderr.strip().splitlines() if line.strip()]
            result[runtime] = {"error": error_lines[-1][:160] if error_lines else f"exit {returncode}"}
    return result


def environment(peer_isa):
    import nxrt
    import onnxruntime

    return {
        "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
        "nxrt": nxrt.__version__,
        "onnxruntime": onnxruntime.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "processor": cpu_model(),
        "cpus": os.cpu_count(),
        "nxrt_cpu_isa": os.environ.get("NXRT_CPU_ISA") or "native",
        "onnxruntime_cpu": ("AVX2 (AVX-512 hidden from CPUID by bench/cpuid_mask)" if peer_isa == "avx2"
                            else "its own dispatch on this CPU"),
    }


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def load_suite(name):
    if name in ("real", "contrib", "ml"):
        import importlib.util

        path = Path(__file__).resolve().parents[1] / name / "models.py"
        spec = importlib.util.spec_from_file_location(f"{name}_models", path)
        suite = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(suite)
        return suite.build_all()
    return models.build_all()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", choices=["synthetic", "real", "contrib", "ml"], default="synthetic",
                        help="synthetic: models.py; real: models from PyPI packages (bench/real/models.py); "
                             "contrib: com.microsoft ops and an int4 builder decoder (bench/contrib/models.py); "
                             "ml: scikit-learn models via skl2onnx (bench/ml/models.py)")
    parser.add_argument("--quick", action="store_true", help="fewer rounds and shorter rounds (a few minutes)")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--isa", choices=["generic", "avx2", "avx512"],
                        help="run nxrt at this CPU tier (NXRT_CPU_ISA); results go under bench/results/<tier>")
    parser.add_argument("--out", default=None)
    parser.add_argument("--only", action="append", help="run only models whose name contains this (repeatable)")
    parser.add_argument("--no-rss", action="store_true", help="skip the peak-RSS child processes")
    parser.add_argument("--opt-level", choices=["all", "extended"], default="all",
                        help="graph optimization level of both runtimes (extended: ORT_ENABLE_EXTENDED, no layout "
                             "passes); results of extended go under <out>/extended")
    parser.add_argument("--peer-isa", choices=["native", "avx2"], default="native",
                        help="avx2: hide AVX-512 from CPUID in this process (bench/cpuid_mask), so onnxruntime runs "
                             "the kernels it picks on an AVX2-only CPU; results go under <out>/ort-avx2")
    parser.add_argument("--rss-child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rss_child:
        runtime, model_path, feeds_path, threads, os.environ[OPT_LEVEL_ENV] = args.rss_child
        peak_rss_child(runtime, model_path, feeds_path, int(threads))
        return

    os.environ[OPT_LEVEL_ENV] = args.opt_level
    if args.peer_isa == "avx2":
        # Before either runtime is imported: both read CPUID once, when they load.
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cpuid_mask"))
        import mask

        mask.hide_avx512()
    settings = ({"rounds": 7, "target_ms": 60.0, "creates": 1, "pause_s": 0.1} if args.quick
                else {"rounds": 15, "target_ms": 200.0, "creates": 3, "pause_s": 0.1})
    wall_start = time.perf_counter()
    cases = load_suite(args.suite)
    if args.only:
        cases = [case for case in cases if any(part in case.name for part in args.only)]

    rows = []
    with tempfile.TemporaryDirectory(prefix="nxrt_bench_") as workdir:
        for case in cases:
            rss = {} if args.no_rss else measure_peak_rss(case, workdir)
            for threads in args.threads:
                row = bench_case(case, threads, settings)
                row["notes"] = case.notes
                for runtime, value in rss.items():
                    row[f"{runtime}_rss"] = value
                rows.append(row)
                print(report.console_line(row), flush=True)

    LAUNCHER.stdin.close()
    LAUNCHER.wait()
    wall_s = time.perf_counter() - wall_start
    meta = {"environment": environment(args.peer_isa), "settings": settings, "quick": args.quick,
            "threads": args.threads,
            "rss_threads": RSS_THREADS, "rss_runs": RSS_RUNS, "wall_s": wall_s,
            "command": " ".join([Path(sys.executable).name] + sys.argv)}
    default_out = Path("bench/results") / ("" if args.suite == "synthetic" else args.suite) / (args.isa or "")
    out = Path(args.out) if args.out else (default_out / ("extended" if args.opt_level == "extended" else "")
                                           / ("ort-avx2" if args.peer_isa == "avx2" else ""))
    out.mkdir(parents=True, exist_ok=True)
    report.write_json(out / "results.json", meta, rows)
    report.write_markdown(out / "results.md", meta, rows)
    chart = report.write_chart(out / "ratios.png", rows, args.threads)
    print(f"\nwrote {out / 'results.md'}, {out / 'results.json'}" + (f", {chart}" if chart else ""))
    print(f"wall time {wall_s:.1f} s")


if __name__ == "__main__":
    main()
