"""bench/cpuid_mask: hiding AVX-512 from CPUID so that the benchmarks can run onnxruntime on its AVX2 kernels.

Each check runs in a child process: the mask lasts for the life of the process that installs it. Machines without
CPUID faulting or without AVX-512 skip (with the reason shown), since there is nothing to hide or no way to hide it.
"""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def cpu_flags():
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def run_child(body):
    """Runs `body` in a child process; skips when the kernel refuses CPUID faulting there (a sandbox may, even where
    the CPU lists cpuid_fault)."""
    code = f"import sys\nsys.path.insert(0, {str(ROOT / 'bench' / 'cpuid_mask')!r})\n" + textwrap.dedent(body)
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    if "CPUID faulting is not available" in child.stderr:
        pytest.skip("the kernel refuses CPUID faulting here (arch_prctl ARCH_SET_CPUID)")
    return child


@pytest.fixture(scope="module")
def maskable():
    if not Path("/proc/cpuinfo").exists():
        pytest.skip("no /proc/cpuinfo (not Linux)")
    flags = cpu_flags()
    if "cpuid_fault" not in flags:
        pytest.skip("this CPU or hypervisor offers no CPUID faulting")
    if "avx512f" not in flags:
        pytest.skip("no AVX-512 to hide on this CPU")


def test_masked_cpuid_hides_avx512_in_this_thread_and_later_threads(maskable):
    child = run_child("""
        import ctypes, threading
        import mask
        library = mask._library()
        assert library.nxrt_cpuid_reports_avx512() == 1, "AVX-512 must show before masking"
        mask.hide_avx512()
        seen = []
        worker = threading.Thread(target=lambda: seen.append(library.nxrt_cpuid_reports_avx512()))
        worker.start()
        worker.join()
        print(library.nxrt_cpuid_reports_avx512(), seen[0])
    """)
    assert child.returncode == 0, child.stderr
    assert child.stdout.split() == ["0", "0"]


def test_runtimes_loaded_after_the_mask_still_compute_correctly(maskable):
    # onnxruntime then dispatches to its AVX2 kernels and nxrt detects the avx2 tier: a MatMul must still agree.
    child = run_child("""
        import mask
        mask.hide_avx512()
        import numpy as np
        import onnx
        from onnx import TensorProto, helper
        import nxrt, onnxruntime
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 64])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 32])
        w = onnx.numpy_helper.from_array(np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32), "w")
        graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g", [x], [y], [w])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
        feed = {"x": np.random.default_rng(1).standard_normal((3, 64)).astype(np.float32)}
        want = feed["x"].astype(np.float64) @ onnx.numpy_helper.to_array(w).astype(np.float64)
        got_nxrt = nxrt.InferenceSession(model).run(None, feed)[0]
        got_ort = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feed)[0]
        np.testing.assert_allclose(got_nxrt, want, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(got_ort, want, rtol=1e-4, atol=1e-4)
        print("ok")
    """)
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip() == "ok"
