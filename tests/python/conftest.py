import os
import pathlib
import subprocess

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def nxrt_cli():
    """Path of the built `nxrt` command-line tool (NXRT_CLI overrides build/nxrt)."""
    path = pathlib.Path(os.environ.get("NXRT_CLI", ROOT / "build" / "nxrt"))
    if not path.exists():
        pytest.fail(f"nxrt CLI not built at {path}; run scripts/build.sh first")
    return path


@pytest.fixture
def run_model(nxrt_cli, tmp_path):
    """Runs a model file through `nxrt run` with .npy inputs and returns {output name: array}."""

    def run(model_path, inputs):
        args = [str(nxrt_cli), "run", str(model_path), "--output-dir", str(tmp_path / "out")]
        for name, value in inputs.items():
            file = tmp_path / f"in_{name}.npy"
            np.save(file, value)
            args += ["--input", f"{name}={file}"]
        done = subprocess.run(args, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        return {p.stem: np.load(p) for p in (tmp_path / "out").glob("*.npy")}

    return run
