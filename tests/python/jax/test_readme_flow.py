"""The README's JAX flow end to end: export simple_add with a symbolic batch from JAX, then run the file from
Python (examples/jax/export_simple_add.py), C (examples/c/simple_add.c) and C++ (examples/cpp/
simple_add_io_binding.cpp). The C and C++ programs are the ctest example binaries of build/."""

import os
import pathlib
import runpy
import subprocess
import sys

import onnx
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
EXAMPLES = pathlib.Path(os.environ.get("NXRT_BUILD_DIR", ROOT / "build")) / "examples"


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    path = tmp_path_factory.mktemp("readme") / "simple_add.onnx"
    script = runpy.run_path(str(ROOT / "examples" / "jax" / "export_simple_add.py"))
    assert script["main"](str(path)) == 0
    return path


def test_export_keeps_symbolic_batch(exported):
    model = onnx.load(str(exported))
    onnx.checker.check_model(model)
    for value in list(model.graph.input) + list(model.graph.output):
        dims = value.type.tensor_type.shape.dim
        assert [d.dim_param for d in dims] == ["B"], value
    assert [v.name for v in model.graph.input] == ["x", "y"]
    assert [v.name for v in model.graph.output] == ["z"]


@pytest.mark.parametrize("program", ["example_c_simple_add", "example_cpp_simple_add_io_binding"])
def test_native_programs_run_the_export(exported, program):
    binary = EXAMPLES / program
    if not binary.exists():
        pytest.fail(f"{binary} is missing: build the project first (scripts/build.sh build)")
    result = subprocess.run([str(binary), str(exported)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_script_runs_as_a_program(tmp_path):
    path = tmp_path / "simple_add.onnx"
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "jax" / "export_simple_add.py"), str(path)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "B=1000" in result.stdout
