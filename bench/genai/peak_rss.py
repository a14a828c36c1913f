"""Peak resident memory of one generation, nxrt.genai against onnxruntime_genai, each in a fresh process:

    .venv/bin/python bench/genai/peak_rss.py [--precisions int4 fp32] [--batch 1 4]

For the builder models of bench/genai/run.py (built there into $NXRT_BENCH_CACHE), a child process imports one
runtime, loads the folder, prefills a 512-token prompt and generates 128 tokens; the table gives the child's peak
RSS (getrusage ru_maxrss) after import alone and after the generation, and the generation's share (the
difference). Prints a markdown table."""

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
import run as genai_bench  # noqa: E402

CHILD = r"""
import json, resource, sys
import numpy as np
name, folder, batch = sys.argv[1], sys.argv[2], int(sys.argv[3])
og = __import__("nxrt.genai" if name == "nxrt" else "onnxruntime_genai", fromlist=["x"])
imported = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
model = og.Model(folder)
params = og.GeneratorParams(model)
params.set_search_options(max_length=640, min_length=640, do_sample=False, batch_size=batch)
generator = og.Generator(model, params)
generator.append_tokens(np.random.default_rng(0).integers(3, 1000, (batch, 512)).astype(np.int32))
for _ in range(128):
    generator.generate_next_token()
print(json.dumps({"imported": imported, "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--precisions", nargs="+", default=["int4", "fp32"])
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 4])
    args = parser.parse_args()
    lines = ["| precision | batch | runtime | after import MiB | peak MiB | generation MiB |", "|---|---:|---|---:|---:|---:|"]
    with tempfile.TemporaryDirectory() as scratch:
        for precision in args.precisions:
            folder = genai_bench.folder_for(genai_bench.build(precision), 1, pathlib.Path(scratch))
            for batch in args.batch:
                for name in ("nxrt", "onnxruntime_genai"):
                    done = subprocess.run([sys.executable, "-c", CHILD, name, str(folder), str(batch)],
                                          capture_output=True, text=True, check=True)
                    r = json.loads(done.stdout.strip().splitlines()[-1])
                    lines.append(f"| {precision} | {batch} | {name} | {r['imported'] / 1024:.0f} | "
                                 f"{r['peak'] / 1024:.0f} | {(r['peak'] - r['imported']) / 1024:.0f} |")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
