"""Hides AVX-512 from CPUID in this process (see cpuid_mask.c), so that onnxruntime dispatches to the kernels of an
AVX2-only processor. Call ``hide_avx512()`` before importing onnxruntime (or numpy, whose dispatch also reads CPUID).

The shim is compiled with the system C compiler into ``$NXRT_BENCH_CACHE`` (default ``~/.cache/nxrt-bench``) the
first time, and again whenever the source is newer.
"""

import ctypes
import os
import subprocess
from pathlib import Path

SOURCE = Path(__file__).resolve().with_name("cpuid_mask.c")


def _library():
    cache = Path(os.environ.get("NXRT_BENCH_CACHE", Path.home() / ".cache" / "nxrt-bench"))
    cache.mkdir(parents=True, exist_ok=True)
    library = cache / "libnxrt_cpuid_mask.so"
    if not library.exists() or library.stat().st_mtime < SOURCE.stat().st_mtime:
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(library), str(SOURCE)], check=True)
    return ctypes.CDLL(str(library))


def hide_avx512():
    """Masks AVX-512 out of CPUID for this thread and the threads it creates from now on. Raises RuntimeError when
    the machine cannot fault on CPUID (no ``cpuid_fault``) or the masked CPUID still reports AVX-512."""
    library = _library()
    if library.nxrt_cpuid_mask_install() != 0:
        raise RuntimeError("CPUID faulting is not available here (no cpuid_fault in /proc/cpuinfo?)")
    if library.nxrt_cpuid_reports_avx512() != 0:
        raise RuntimeError("CPUID still reports AVX-512 after masking")
    return True
