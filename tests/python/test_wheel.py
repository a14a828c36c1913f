"""The Python package as a user gets it: `pip wheel .` builds only the extension, and the wheel installs and
imports in a fresh venv that holds nothing but the wheel and what it declares (numpy).

The wheel is abi3 (one wheel for CPython 3.12 and later) when built by Python 3.12+, and tagged for the building
Python's own version below that."""
import os
import pathlib
import subprocess
import sys
import sysconfig
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def clean_env():
    """The environment without the variables that point Python at the development tree."""
    env = dict(os.environ)
    for name in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"):
        env.pop(name, None)
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    pytest.importorskip("scikit_build_core", reason="needs scikit-build-core (requirements/test.txt)")
    pytest.importorskip("nanobind", reason="needs nanobind (requirements/test.txt)")
    dist = tmp_path_factory.mktemp("dist")
    # A fresh CMake tree; with the same warning flags as build/ (NXRT_WERROR from the environment, as
    # scripts/test.sh sets it), ccache serves the engine's objects from the main tree's compile.
    werror = "ON" if os.environ.get("NXRT_WERROR", "0") not in ("", "0") else "OFF"
    settings = [f"--config-settings=build-dir={tmp_path_factory.mktemp('wheel-build')}",
                f"--config-settings=cmake.define.NXRT_WERROR={werror}"]
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-q",
                           *settings, "-w", str(dist), str(ROOT)], capture_output=True, text=True, env=clean_env(),
                          cwd=dist)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    wheels = list(dist.glob("nxrt-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_wheel_tag_matches_python(wheel):
    python_tag, abi_tag, platform_tag = wheel.stem.split("-")[2:5]
    if sys.version_info >= (3, 12):
        assert (python_tag, abi_tag) == ("cp312", "abi3")
    else:
        version = f"cp{sys.version_info.major}{sys.version_info.minor}"
        assert (python_tag, abi_tag) == (version, version)
    assert platform_tag == sysconfig.get_platform().replace("-", "_").replace(".", "_")


def test_wheel_holds_only_the_package(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    package_files = [n for n in names if not n.startswith("nxrt-")]
    assert all(n.startswith("nxrt/") for n in package_files), package_files
    assert any(n.startswith("nxrt/_nxrt.") and n.endswith(".so") for n in names)
    # Only the extension module: no test binaries, no libnxrt.so, no headers.
    assert [n for n in names if n.endswith(".so")] == [n for n in names if n.startswith("nxrt/_nxrt.")]
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    required = [line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    assert [r for r in required if "extra ==" not in r] == ["numpy>=1.26"]


def test_wheel_imports_and_runs_in_a_fresh_venv(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=clean_env())
    python = venv / "bin" / "python"
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], capture_output=True, text=True,
                          env=clean_env())
    assert done.returncode == 0, done.stderr[-4000:]
    script = (
        "import importlib.metadata as m, numpy as np, nxrt\n"
        "installed = sorted(d.metadata['Name'].lower() for d in m.distributions())\n"
        "print(installed)\n"
        "session = nxrt.InferenceSession(nxrt.builtin_model('simple_add'))\n"
        "x = np.arange(4, dtype=np.float32)\n"
        "names = [i.name for i in session.get_inputs()]\n"
        "z, = session.run(None, {names[0]: x, names[1]: np.ones(4, np.float32)})\n"
        "print(z.tolist())\n"
        "print(nxrt.__file__)\n")
    done = subprocess.run([str(python), "-c", script], capture_output=True, text=True, env=clean_env(), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    installed, values, location = done.stdout.strip().splitlines()[-3:]
    assert set(eval(installed)) - {"pip", "setuptools"} == {"nxrt", "numpy"}
    assert values == "[1.0, 3.0, 5.0, 7.0]"
    assert location.startswith(str(venv))
