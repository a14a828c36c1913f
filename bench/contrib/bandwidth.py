"""Memory read bandwidth of this machine, the ceiling for a decode step that streams its weights once
(MatMulNBits at M = 1): GB/s of summing a 1 GiB float32 array (far beyond the caches), on 1 thread and split over
N threads (numpy releases the GIL inside the reduction). Best of several passes.

    .venv/bin/python bench/contrib/bandwidth.py [--threads 1 2]
"""

import argparse
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def read_gbps(data, threads, passes=5):
    parts = np.array_split(data, threads)
    best = float("inf")
    with ThreadPoolExecutor(threads) as pool:
        for _ in range(passes):
            start = time.perf_counter()
            list(pool.map(np.sum, parts))
            best = min(best, time.perf_counter() - start)
    return data.nbytes / best / 1e9


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--gib", type=float, default=1.0)
    args = parser.parse_args()
    data = np.ones(int(args.gib * (1 << 30)) // 4, np.float32)
    for threads in args.threads:
        print(f"read bandwidth, {threads} thread(s): {read_gbps(data, threads):.1f} GB/s")


if __name__ == "__main__":
    main()
