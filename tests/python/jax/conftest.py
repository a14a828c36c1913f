"""The nxrt.jax exporter tests. Without jax every module here is reported skipped, naming the package; tests that
also need flax or equinox skip through jax_harness.optional_module."""

import importlib
import os

import pytest

# nxrt runs these exports on the CPU, so JAX's side of each comparison runs there too: on a GPU machine JAX would
# otherwise pick the GPU (other matmul precision) and every pytest-xdist worker would reserve most of its memory.
os.environ.setdefault("JAX_PLATFORMS", "cpu")

JAX_MISSING = "needs jax (requirements/heavy.txt)"


def _importable(name):
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


HAVE_JAX = _importable("jax")


class _ModuleNeedingJax(pytest.Module):
    """Stands in for a test module when jax is missing: collecting it skips, so nothing imports jax."""

    def collect(self):
        pytest.skip(JAX_MISSING)


def pytest_pycollect_makemodule(module_path, parent):
    if not HAVE_JAX:
        return _ModuleNeedingJax.from_parent(parent, path=module_path)
    return None


def pytest_terminal_summary(terminalreporter):
    if not HAVE_JAX:
        return
    import jax_harness
    for line in jax_harness.error_summary():
        terminalreporter.write_line(line)
