#!/usr/bin/env python3
"""Runs every ONNX backend node test case of the installed `onnx` package through nxrt on CPU.

Cases run in batches: one `nxrt run --batch FILE` process per 64 cases, each data set of a case one line of FILE,
each line answered by a status line. When a batch process crashes or hangs (no status line for 120 s), the lines
that have no status yet run again one per process, so a crash fails only the case that crashed. Inputs and outputs
travel as serialized TensorProto files, so every element type (bfloat16, float8, int4, strings) crosses
unchanged. Outputs are compared as the official suite does: same dtype and shape, values with the case's
rtol/atol (1e-3 / 1e-7) for floating types and exactly otherwise.

  run_conformance.py                     run everything, write report.md and results.json to build/conformance/
  run_conformance.py -k conv             only cases whose name contains "conv"
  run_conformance.py --report-dir DIR    write report.md and results.json to DIR instead
  run_conformance.py --check             also fail (exit 1) when a case listed in expected_passing.txt fails
  run_conformance.py --update            rewrite expected_passing.txt with the cases that pass now
"""
import argparse
import collections
import concurrent.futures
import json
import os
import pathlib
import queue
import re
import shlex
import subprocess
import sys
import tempfile
import threading
import time
import warnings

import numpy as np
import onnx
from onnx import numpy_helper

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
EXPECTED = HERE / "expected_passing.txt"
CASES_PER_BATCH = 64
TIMEOUT_S = 120
# The status line `nxrt run --batch` prints after each line of its batch file.
STATUS_LINE = re.compile(r"^nxrt-batch: line (\d+): (?:(ok)|error: (.*))$")


def load_cases(pattern):
    from onnx.backend.test.loader import load_model_tests

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = load_model_tests(kind="node")
    return [c for c in cases if pattern in c.name]


def case_model(case):
    if case.model is not None:
        return case.model
    return onnx.load(os.path.join(case.model_dir, "model.onnx"))


def kind_of(value_info):
    """'tensor', 'sequence', 'optional' or 'map': the kind of a graph input or output."""
    which = value_info.type.WhichOneof("value")
    return which.replace("_type", "") if which else "tensor"


def read_value_file(path, kind):
    """A .pb file of test data, parsed as the proto its value kind uses."""
    data = pathlib.Path(path).read_bytes()
    if kind == "sequence":
        proto = onnx.SequenceProto()
        proto.ParseFromString(data)
        return numpy_helper.to_list(proto)
    if kind == "optional":
        proto = onnx.OptionalProto()
        proto.ParseFromString(data)
        return numpy_helper.to_optional(proto)
    proto = onnx.TensorProto()
    proto.ParseFromString(data)
    return numpy_helper.to_array(proto)


def value_file_bytes(value, value_info):
    """Serializes a test value as the proto `nxrt run` reads for the input's declared type."""
    kind = kind_of(value_info)
    if isinstance(value, (onnx.TensorProto, onnx.SequenceProto, onnx.OptionalProto)):
        return value.SerializeToString()
    if kind == "sequence":
        return numpy_helper.from_list([np.asarray(v) for v in value], value_info.name).SerializeToString()
    if kind == "optional":
        inner = value_info.type.optional_type.elem_type.WhichOneof("value")
        if isinstance(value, list) or inner == "sequence_type":
            value = None if value is None else [np.asarray(v) for v in value]
        elif value is not None:
            value = np.asarray(value)
        return numpy_helper.from_optional(value, value_info.name).SerializeToString()
    if kind != "tensor":
        raise NotImplementedError(f"{kind} inputs")
    return numpy_helper.from_array(np.asarray(value), value_info.name).SerializeToString()


def case_data_sets(case):
    """[(inputs, outputs)] as numpy arrays (lists for sequences, None for empty optionals), from memory or from the
    test_data_set_* folders."""
    if case.model is not None:
        return [(list(i), list(o)) for i, o in case.data_sets]
    model = case_model(case)
    initializers = {t.name for t in model.graph.initializer}
    input_kinds = [kind_of(i) for i in model.graph.input if i.name not in initializers]
    output_kinds = [kind_of(o) for o in model.graph.output]
    sets = []
    for folder in sorted(pathlib.Path(case.model_dir).glob("test_data_set_*")):
        def read(prefix, kinds):
            files = sorted(folder.glob(f"{prefix}_*.pb"), key=lambda p: int(p.stem.split("_")[1]))
            return [read_value_file(p, kinds[i] if i < len(kinds) else "tensor") for i, p in enumerate(files)]
        sets.append((read("input", input_kinds), read("output", output_kinds)))
    return sets


def compare(name, got, want, rtol, atol):
    """Returns None when equal, else a one-line reason."""
    want = np.asarray(want)
    if got.dtype != want.dtype:
        return f"{name}: dtype {got.dtype} != expected {want.dtype}"
    if got.shape != want.shape:
        return f"{name}: shape {got.shape} != expected {want.shape}"
    if want.dtype.kind in "fc" or str(want.dtype) in ("bfloat16",) or want.dtype.itemsize and want.dtype.kind == "V":
        try:
            np.testing.assert_allclose(got.astype(np.float64) if want.dtype.kind not in "c" else got,
                                       want.astype(np.float64) if want.dtype.kind not in "c" else want,
                                       rtol=rtol, atol=atol)
        except AssertionError as error:
            lines = [l for l in str(error).splitlines() if "Mismatch" in l or "Max abs" in l]
            return f"{name}: values differ ({'; '.join(l.strip() for l in lines)})"
        return None
    if not np.array_equal(got, want):
        return f"{name}: values differ"
    return None


def compare_value(name, got, want, rtol, atol):
    """compare() for tensors, sequences (lists, element by element) and optionals (None when empty)."""
    if isinstance(want, onnx.TensorProto):
        want = numpy_helper.to_array(want)
    if want is None or got is None:
        return None if want is None and got is None else f"{name}: optional is {'empty' if got is None else 'set'}"
    if isinstance(want, list):
        if not isinstance(got, list):
            return f"{name}: expected a sequence"
        if len(got) != len(want):
            return f"{name}: sequence of {len(got)} elements != expected {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            reason = compare(f"{name}[{i}]", g, w, rtol, atol)
            if reason:
                return reason
        return None
    if isinstance(got, list):
        return f"{name}: got a sequence, expected a tensor"
    return compare(name, got, want, rtol, atol)


def failure_of_message(message):
    """(status, reason) of a run that ended with the error `message`."""
    return ("not_implemented" if "NOT_IMPLEMENTED" in message else "failed"), message


def run_one(cli, run_args):
    """Runs one `nxrt run` process: None when it succeeds, else (status, reason)."""
    try:
        done = subprocess.run([str(cli), "run", *run_args], capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return "failed", f"timed out after {TIMEOUT_S} s"
    if done.returncode == 0:
        return None
    if done.returncode < 0:
        return "failed", f"crashed with signal {-done.returncode}"
    message = (done.stderr or done.stdout).strip().splitlines()
    return failure_of_message(message[-1] if message else f"exit code {done.returncode}")


def unescape_message(text):
    """Undoes the escaping of a batch status line: \\n is a line break, \\r a carriage return, \\\\ a backslash."""
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "r": "\r"}.get(m[1], m[1]), text)


def run_batch(cli, entries, batch_file):
    """Runs the argument lists `entries` through one `nxrt run --batch` process; {entry index: None or (status,
    reason)} for the entries that reported a status before the process ended or went silent for TIMEOUT_S."""
    batch_file.write_text("".join(shlex.join(args) + "\n" for args in entries))
    process = subprocess.Popen([str(cli), "run", "--batch", str(batch_file)], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    lines = queue.Queue()

    def read():
        for line in process.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    results = {}
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            process.kill()
            break
        if line is None:
            break
        match = STATUS_LINE.match(line.rstrip("\n"))
        if not match:
            continue
        deadline = time.monotonic() + TIMEOUT_S
        if match[2]:
            results[int(match[1]) - 1] = None
        else:
            message = unescape_message(match[3]).strip().splitlines()
            results[int(match[1]) - 1] = failure_of_message(message[-1] if message else "exit code 1")
    process.wait()
    return results


def prepare_case(case, workdir):
    """The steps of a case in order: ("run", args of `nxrt run`, graph outputs, expected outputs, output folder) per
    data set, ending early with ("result", status, reason) or ("raise", error) where a data set cannot be passed."""
    model = case_model(case)
    model_path = workdir / "model.onnx"
    model_path.write_bytes(model.SerializeToString())
    initializers = {t.name for t in model.graph.initializer}
    graph_inputs = [i for i in model.graph.input if i.name not in initializers]
    graph_outputs = list(model.graph.output)
    steps = []
    for index, (inputs, outputs) in enumerate(case_data_sets(case)):
        out_dir = workdir / f"out{index}"
        args = [str(model_path), "--output-dir", str(out_dir), "--output-format", "pb", "--quiet"]
        try:
            for number, (info, value) in enumerate(zip(graph_inputs, inputs)):
                path = workdir / f"in{index}_{number}.pb"
                path.write_bytes(value_file_bytes(value, info))
                args += ["--input", f"{info.name}={path}"]
        except NotImplementedError as error:
            return steps + [("result", "not_implemented", f"the runner cannot pass {error}")]
        except Exception as error:
            return steps + [("raise", error)]
        steps.append(("run", args, graph_outputs, outputs, out_dir))
    return steps


def evaluate_case(case, steps, entry_results):
    """(status, reason) of a prepared case; entry_results[i] is the outcome of the i-th "run" step."""
    runs = iter(entry_results)
    for step in steps:
        if step[0] == "result":
            return step[1], step[2]
        if step[0] == "raise":
            raise step[1]
        _, _, graph_outputs, outputs, out_dir = step
        failure = next(runs)
        if failure:
            return failure
        for info, want in zip(graph_outputs, outputs):
            path = out_dir / f"{info.name}.pb"
            if not path.exists():
                return "failed", f"output {info.name} was not written"
            got = read_value_file(path, kind_of(info))
            reason = compare_value(info.name, got, want, case.rtol, case.atol)
            if reason:
                return "failed", reason
    return "passed", ""


def run_cases(chunk, cli, tmp):
    """Runs [(index, case)] through one batch process; [(name, op, status, reason)] in order."""
    prepared = []
    for index, case in chunk:
        workdir = pathlib.Path(tmp) / str(index)
        workdir.mkdir()
        try:
            prepared.append((case, op_of(case), prepare_case(case, workdir)))
        except Exception as error:  # a case the runner cannot prepare counts as failed, with the reason
            prepared.append((case, "?", error))
    entries = [step[1] for _, _, steps in prepared if isinstance(steps, list) for step in steps if step[0] == "run"]
    results = run_batch(cli, entries, pathlib.Path(tmp) / f"batch{chunk[0][0]}.txt") if entries else {}
    missing = [i for i in range(len(entries)) if i not in results]
    if missing:
        print(f"batch of {len(entries)} runs from {chunk[0][1].name} ended with {len(missing)} without a status; "
              "running those one per process", file=sys.stderr)
    for i in missing:
        results[i] = run_one(cli, entries[i])
    rows, first = [], 0
    for case, op, steps in prepared:
        try:
            if isinstance(steps, Exception):
                raise steps
            count = sum(step[0] == "run" for step in steps)
            outcome = evaluate_case(case, steps, [results[first + i] for i in range(count)])
            first += count
            rows.append((case.name, op, *outcome))
        except Exception as error:
            rows.append((case.name, "?", "failed", f"runner error: {type(error).__name__}: {error}"))
    return rows


def op_types_by_key():
    """{lowercase op name without underscores: op type} for every ai.onnx op."""
    return {schema.name.lower(): schema.name for schema in onnx.defs.get_all_schemas_with_history()
            if schema.domain in ("", "ai.onnx")}


OP_KEYS = op_types_by_key()
# Case-name prefixes that abbreviate their operator.
OP_KEYS.update({"sce": "SoftmaxCrossEntropyLoss", "nllloss": "NegativeLogLikelihoodLoss",
                "mvn": "MeanVarianceNormalization"})


def op_of(case):
    """The operator a case tests: the longest op name that prefixes the case name (test_reduce_sum_x -> ReduceSum)."""
    squashed = case.name[len("test_"):].replace("_", "").lower()
    matches = [key for key in OP_KEYS if squashed.startswith(key)]
    if matches:
        return OP_KEYS[max(matches, key=len)]
    types = [n.op_type for n in case_model(case).graph.node]
    return types[0] if types else "?"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-k", default="", help="substring filter on case names")
    parser.add_argument("--cli", default=os.environ.get("NXRT_CLI", ROOT / "build" / "nxrt"))
    parser.add_argument("--jobs", type=int, default=2, help="batch processes at a time")
    parser.add_argument("--cases-per-batch", type=int, default=CASES_PER_BATCH,
                        help="cases per `nxrt run --batch` process (1: one process per case)")
    parser.add_argument("--report-dir", type=pathlib.Path, default=ROOT / "build" / "conformance",
                        help="where report.md and results.json go (default build/conformance)")
    parser.add_argument("--check", action="store_true", help="fail when an expected case fails")
    parser.add_argument("--update", action="store_true", help="rewrite expected_passing.txt")
    args = parser.parse_args()

    cases = list(enumerate(load_cases(args.k)))
    size = max(args.cases_per_batch, 1)
    chunks = [cases[i:i + size] for i in range(0, len(cases), size)]
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for rows in pool.map(lambda chunk: run_cases(chunk, args.cli, tmp), chunks):
                for name, op, status, reason in rows:
                    results[name] = {"op": op, "status": status, "reason": reason}

    counts = collections.Counter(r["status"] for r in results.values())
    by_op = collections.defaultdict(collections.Counter)
    for r in results.values():
        by_op[r["op"]][r["status"]] += 1
    lines = ["# ONNX backend node conformance", "",
             f"onnx {onnx.__version__}: {len(results)} cases, {counts['passed']} passed, {counts['failed']} failed, "
             f"{counts['not_implemented']} not implemented", "",
             "| op | passed | failed | not implemented |", "|---|---|---|---|"]
    for op in sorted(by_op):
        c = by_op[op]
        lines.append(f"| {op} | {c['passed']} | {c['failed']} | {c['not_implemented']} |")
    lines += ["", "## Failing cases", ""]
    lines += [f"- {n}: {r['reason']}" for n, r in sorted(results.items()) if r["status"] == "failed"]
    args.report_dir.mkdir(parents=True, exist_ok=True)
    (args.report_dir / "report.md").write_text("\n".join(lines) + "\n")
    (args.report_dir / "results.json").write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    print(lines[2])

    passing = sorted(n for n, r in results.items() if r["status"] == "passed")
    if args.update:
        EXPECTED.write_text("".join(n + "\n" for n in passing))
    if args.check and EXPECTED.exists():
        expected = [l.strip() for l in EXPECTED.read_text().splitlines() if l.strip()]
        regressed = [n for n in expected if n in results and results[n]["status"] != "passed"]
        for name in regressed:
            print(f"REGRESSION {name}: {results[name]['reason']}")
        print(f"conformance: {counts['passed']} passed, {len(regressed)} failed")
        return 1 if regressed else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
