"""Heap allocations per steady-state run of every bench/suite model (all have static shapes), counted by
build/nxrt_allocation_probe, which interposes the C allocator in its own process (worker threads included).

A PreparedRun (names resolved, feeds and outputs bound once), and the C API's IO binding run that sits on it,
allocate nothing at 1 and 2 threads, at the CPU's own tier and every tier below it: the memory
plan holds every intermediate, run states keep the executor's vectors, shapes are inline, and the kernels on these
models' paths allocate nothing per run. Session::run and run_bound still allocate a handful of objects per run
(the result vector, the returned output tensors and their bookkeeping), bounded here so that a regression that
allocates per node fails."""

import os
import pathlib
import subprocess

import pytest

import helpers

PLAIN_RUN_LIMIT = 16  # per run, whatever the model's node count (1 to 100+ nodes here)
BENCH = helpers.load_bench_models()
CASES = BENCH.build_all()


TIERS = ["generic", "avx2", "avx512"]


@pytest.fixture(scope="module")
def detected_isa(nxrt_cli):
    info = subprocess.run([str(nxrt_cli), "info", "builtin:mlp"], capture_output=True, text=True, check=True).stdout
    line = next(line for line in info.splitlines() if line.startswith("cpu isa:"))
    return line.split("detected ")[1].split(";")[0].split(")")[0].strip()


@pytest.fixture(scope="module")
def probe(nxrt_cli):
    path = pathlib.Path(nxrt_cli).parent / "nxrt_allocation_probe"
    if not path.exists():
        pytest.fail(f"{path} is not built (it is built with NXRT_BUILD_TESTS=ON)")
    return path


def probe_counts(probe, tmp_path, case, threads, tier):
    model = tmp_path / "model.onnx"
    model.write_bytes(case.model)
    env = dict(os.environ, NXRT_CPU_ISA=tier) if tier else None
    done = subprocess.run([str(probe), str(model), "--threads", str(threads)], capture_output=True, text=True,
                          timeout=600, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    counts = dict(line.split() for line in done.stdout.splitlines())
    return {way: int(count) for way, count in counts.items()}


def check_counts(counts):
    assert counts["prepared"] == 0, counts
    assert counts["c_binding"] == 0, counts
    assert 0 <= counts["run"] <= PLAIN_RUN_LIMIT, counts
    assert 0 <= counts["run_bound"] <= PLAIN_RUN_LIMIT, counts


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_steady_state_runs_allocate_nothing(probe, tmp_path, case, threads):
    check_counts(probe_counts(probe, tmp_path, case, threads, None))


# The kernels differ per CPU tier (NCHWc and fused paths at avx512, im2col + GEMM below): every tier below this
# CPU's own, at one thread.
@pytest.mark.parametrize("tier", ["generic", "avx2"])
@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_lower_tiers_allocate_nothing(probe, detected_isa, tmp_path, case, tier):
    if TIERS.index(tier) >= TIERS.index(detected_isa):
        pytest.skip(f"this CPU's own tier is {detected_isa}: tested by test_steady_state_runs_allocate_nothing")
    check_counts(probe_counts(probe, tmp_path, case, 1, tier))
