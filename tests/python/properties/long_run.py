"""The property suite's long mode: at least --per-op passing examples for every operator (issue 25's long run).

A test function's cases (its parametrizations) that name the same registered op share that op's examples: a case
of an op with k cases in that function runs ceil(per_op / k) examples, so an op tested at 12 opset / dtype
combinations gets 12 * 42 = 504 examples where a single-case op gets 500. Cases whose id names no registered op
(the attention tests' [float32]) count as one op per function. Cases with the same example count run in one
pytest invocation (NXRT_PROPERTY_EXAMPLES, with NXRT_PROPERTY_UNSCALED=1 so that the suites the CI run gives a
fraction of the examples run them all; derandomized as in CI); hypothesis' statistics give the
passing examples each case really ran (filtered examples do not count), summed per (function, op).

    PYTHONPATH=build/python NXRT_CLI=build/nxrt .venv/bin/python tests/python/properties/long_run.py \\
        [--per-op 500] [--workers 2] [--log DIR] [FILES or node ids ...]

Prints per-op totals below --per-op, the failures and the wall time; exits 1 on a failure or a short op. Cases
without hypothesis statistics are plain tests (fixed inputs) and count no examples. --report-only summarises the
logs of an earlier run."""

import argparse
import collections
import math
import os
import pathlib
import re
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[2]


def collect(targets):
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                          *targets], cwd=REPO, capture_output=True, text=True, check=False).stdout
    return [line.strip() for line in out.splitlines() if "::" in line and not line.startswith(" ")]


def registered_ops():
    import nxrt._nxrt as native

    return {op.rsplit(".", 1)[-1] for op in native.registered_ops() if not op.startswith("com.nxrt.")}


def case_key(node_id, ops):
    """(test function, the op its parameters name or None)."""
    function, _, params = node_id.partition("[")
    named = [token for token in params.rstrip("]").split("-") if token in ops]
    return function, (named[0] if named else None)


def passing_examples(output):
    """node id -> [passing examples, whether it stopped at max_examples], from hypothesis'
    --hypothesis-show-statistics report (a case that stopped earlier exhausted its inputs)."""
    counts, current = {}, None
    for line in output.splitlines():
        header = re.match(r"^(\S+::\S+):\s*$", line.strip())
        if header:
            current = header.group(1)
            counts[current] = [0, False]
            continue
        found = re.search(r"(\d+) passing\b", line)
        if found and current is not None:
            counts[current][0] += int(found.group(1))
        if "Stopped because settings.max_examples" in line and current is not None:
            counts[current][1] = True
    return counts


def run_bucket(ids, examples, workers, log):
    env = {**os.environ, "NXRT_PROPERTY_EXAMPLES": str(examples), "NXRT_PROPERTY_UNSCALED": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", str(workers),
               "--hypothesis-show-statistics", *ids]
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    log.write_text(result.stdout + result.stderr)
    return result.returncode


def read_logs(log_dir):
    """node id -> [passing, stopped at max] over the logs in run order (a top-up run replaces a case's count),
    and the FAILED lines."""
    ran, failures = {}, []
    for log in sorted(log_dir.glob("run-*.log"), key=lambda path: (path.stem.startswith("run-topup"), path.stem)):
        output = log.read_text()
        ran.update(passing_examples(output))
        failures += [line for line in output.splitlines() if line.startswith("FAILED")]
    return ran, failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", default=[str(HERE)])
    parser.add_argument("--per-op", type=int, default=500)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--log", default="/tmp/nxrt-property-long-run")
    parser.add_argument("--report-only", action="store_true", help="summarise the logs of an earlier run in --log")
    args = parser.parse_args()
    log_dir = pathlib.Path(args.log)
    log_dir.mkdir(parents=True, exist_ok=True)
    ids = [i for i in collect(args.targets) if "test_property_coverage" not in i]
    ops = registered_ops()
    keys = {i: case_key(i, ops) for i in ids}
    cases_per_key = collections.Counter(keys.values())
    buckets = collections.defaultdict(list)
    for node_id, key in keys.items():
        buckets[math.ceil(args.per_op / cases_per_key[key])].append(node_id)
    start = time.time()
    for examples, bucket in [] if args.report_only else sorted(buckets.items()):
        (log_dir / f"ids-{examples}.txt").write_text("\n".join(bucket) + "\n")
        code = run_bucket(bucket, examples, args.workers, log_dir / f"run-{examples}.log")
        print(f"{len(bucket):5d} cases at {examples:4d} examples: exit {code}, {time.time() - start:7.0f} s so far",
              flush=True)
    ran, failures = read_logs(log_dir)
    # Top-up: a group below per_op whose cases include some that exhausted their inputs early (an opset that only
    # checks a refusal) gives its other cases the examples those could not run.
    for number, key in enumerate([] if args.report_only else sorted(set(keys.values()), key=str)):
        cases = [i for i, k in keys.items() if k == key and i in ran]
        done = sum(ran[i][0] for i in cases)
        open_cases = [i for i in cases if ran[i][1]]
        if done >= args.per_op or not open_cases or len(open_cases) == len(cases):
            continue
        exhausted = sum(ran[i][0] for i in cases if not ran[i][1])
        examples = math.ceil((args.per_op - exhausted) / len(open_cases))
        code = run_bucket(open_cases, examples, args.workers, log_dir / f"run-topup-{number}.log")
        print(f"top-up {key[0].split('::')[-1]} {key[1]}: {len(open_cases)} cases at {examples} examples: exit "
              f"{code}", flush=True)
    ran, failures = read_logs(log_dir)
    totals = collections.Counter()
    for node_id, key in keys.items():
        if node_id in ran:
            totals[key] += ran[node_id][0]
    plain = sum(1 for node_id in keys if node_id not in ran)
    short = {key: n for key, n in totals.items() if n < args.per_op}
    print(f"{len(ids)} cases ({plain} plain tests), {len(totals)} (function, op) groups, {sum(totals.values())} "
          f"passing examples in {time.time() - start:.0f} s; fewest per group: {min(totals.values(), default=0)}")
    for (function, op), n in sorted(short.items(), key=lambda item: item[1]):
        print(f"  below {args.per_op}: {function} {op or '(all cases)'}: {n}")
    for line in failures:
        print(line)
    return 1 if failures or short else 0


if __name__ == "__main__":
    sys.exit(main())
