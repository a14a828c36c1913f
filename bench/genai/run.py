"""nxrt.genai against onnxruntime_genai on builder model folders, in one process, interleaved:

    .venv/bin/python bench/genai/run.py [--quick] [--threads 1 2] [--precisions int4 fp32]

For a ~125M-parameter Llama-shaped decoder (hidden 768, 12 layers, vocab 32000) made from a random-weight
checkpoint (transformers) by onnxruntime_genai.models.builder at int4 (-e cpu, MatMulNBits accuracy_level 4) and
fp32, it measures prefill tokens/s (a 512-token prompt; 128 with --quick) and decode tokens/s (128 new tokens, 32
with --quick) at batch 1 and 4, for both runtimes, at each thread count, taking the best of several interleaved
rounds. Decoding is forced to the full length (min_length = max_length) so that both runtimes run the same steps.
Decode is bound by memory bandwidth: the table also gives the weight bytes read per second during decode.

The models are built once into $NXRT_BENCH_CACHE (default ~/.cache/nxrt-bench); results go to
bench/results/genai/results.md.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
TOKENIZER = ROOT.parent / "shared" / "genai" / "tiny-random-gpt2-fp32"
CACHE = Path(os.environ.get("NXRT_BENCH_CACHE", Path.home() / ".cache" / "nxrt-bench"))


def build(precision):
    out = CACHE / f"llama125m_{precision}"
    if (out / "model.onnx").exists():
        return out
    checkpoint = CACHE / "llama125m_hf"
    if not (checkpoint / "config.json").exists():
        script = ("import sys, torch, transformers\n"
                  "torch.manual_seed(0)\n"
                  "config = transformers.LlamaConfig(vocab_size=32000, hidden_size=768, intermediate_size=2048,\n"
                  "    num_hidden_layers=12, num_attention_heads=12, num_key_value_heads=4,\n"
                  "    max_position_embeddings=2048)\n"
                  "transformers.LlamaForCausalLM(config).save_pretrained(sys.argv[1])\n")
        subprocess.run([sys.executable, "-c", script, str(checkpoint)], check=True)
        for file in ("tokenizer.json", "tokenizer_config.json", "vocab.json"):
            (checkpoint / file).write_bytes((TOKENIZER / file).read_bytes())
    subprocess.run([sys.executable, "-m", "onnxruntime_genai.models.builder", "-m", "local/llama125m", "-i",
                    str(checkpoint), "-o", str(out), "-p", precision, "-e", "cpu"], check=True, capture_output=True)
    return out


def folder_for(source, threads, root):
    """A copy of the folder whose config pins the thread count and keeps special ids in the vocab (a copy: onnx
    refuses external data files with several hard links, and nxrt data outside the model's folder)."""
    folder = root / f"{source.name}_t{threads}"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for file in source.iterdir():
        if file.name != "genai_config.json":
            shutil.copyfile(file, folder / file.name)
    config = json.loads((source / "genai_config.json").read_text())
    model = config["model"]
    vocab = model["vocab_size"]
    eos = model["eos_token_id"] if isinstance(model["eos_token_id"], list) else [model["eos_token_id"]]
    model["eos_token_id"] = [e for e in eos if e < vocab] or [2]
    for key in ("bos_token_id", "pad_token_id"):
        if model.get(key, 0) >= vocab:
            model[key] = model["eos_token_id"][0]
    options = model["decoder"].setdefault("session_options", {})
    options["intra_op_num_threads"] = threads
    options["inter_op_num_threads"] = 1
    (folder / "genai_config.json").write_text(json.dumps(config))
    return folder


def weight_bytes(folder):
    """Bytes of the initializers a decode step reads in full: all but those only gathered from (an embedding table,
    of which a step reads its tokens' rows)."""
    import onnx

    model = onnx.load(str(folder / "model.onnx"), load_external_data=False)
    gathered, read_whole = set(), set()
    for node in model.graph.node:
        for i, name in enumerate(node.input):
            (gathered if node.op_type in ("Gather", "GatherBlockQuantized") and i == 0 else read_whole).add(name)
    total = 0
    for tensor in model.graph.initializer:
        if tensor.name in gathered and tensor.name not in read_whole:
            continue
        count = int(np.prod(tensor.dims)) if tensor.dims else 1
        bits = {onnx.TensorProto.UINT8: 8, onnx.TensorProto.INT8: 8, onnx.TensorProto.FLOAT16: 16,
                onnx.TensorProto.FLOAT: 32, onnx.TensorProto.INT64: 64,
                onnx.TensorProto.INT32: 32}.get(tensor.data_type, 32)
        total += count * bits // 8
    return total


def run_once(og, folder, prompts, new_tokens):
    """(prefill seconds, decode seconds) of one generation with onnxruntime_genai's API (either runtime)."""
    model = og.Model(str(folder))
    params = og.GeneratorParams(model)
    length = prompts.shape[1] + new_tokens
    params.set_search_options(max_length=length, min_length=length, do_sample=False, batch_size=len(prompts))
    generator = og.Generator(model, params)
    start = time.perf_counter()
    generator.append_tokens(prompts)
    prefilled = time.perf_counter()
    for _ in range(new_tokens):
        generator.generate_next_token()
    done = time.perf_counter()
    return prefilled - start, done - prefilled


def read_bandwidth(threads, gibibytes=1.0, rounds=3):
    """The machine's memory read bandwidth in GB/s: `threads` threads each taking the max of its share of a uint64
    array far larger than the caches (numpy releases the GIL inside the reduction), best of `rounds`."""
    import threading

    data = np.ones(int(gibibytes * (1 << 30)) // 8, np.uint64)
    parts = np.array_split(data, threads)
    best = np.inf
    for _ in range(rounds):
        workers = [threading.Thread(target=part.max) for part in parts]
        start = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        best = min(best, time.perf_counter() - start)
    return data.nbytes / best / 1e9


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="shorter prompts and generations, fewer rounds")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--precisions", nargs="+", default=["int4", "fp32"])
    args = parser.parse_args()
    import onnxruntime_genai as og_theirs

    import nxrt.genai as og_ours

    prompt_length, new_tokens, rounds = (128, 32, 2) if args.quick else (512, 128, 3)
    rng = np.random.default_rng(0)
    rows = []
    work = CACHE / "genai_bench"
    for precision in args.precisions:
        source = build(precision)
        gigabytes = weight_bytes(source) / 1e9
        for threads in args.threads:
            folder = folder_for(source, threads, work)
            for batch in (1, 4):
                prompts = rng.integers(10, 30000, size=(batch, prompt_length)).astype(np.int32)
                best = {"nxrt": [np.inf, np.inf], "ort-genai": [np.inf, np.inf]}
                for _ in range(rounds):
                    for name, og in (("nxrt", og_ours), ("ort-genai", og_theirs)):
                        prefill, decode = run_once(og, folder, prompts, new_tokens)
                        best[name][0] = min(best[name][0], prefill)
                        best[name][1] = min(best[name][1], decode)
                ours, theirs = best["nxrt"], best["ort-genai"]
                rows.append((precision, threads, batch, batch * prompt_length / ours[0], batch * prompt_length / theirs[0],
                             batch * new_tokens / ours[1], batch * new_tokens / theirs[1],
                             gigabytes * new_tokens / ours[1], gigabytes * new_tokens / theirs[1]))
                print(f"{precision} t={threads} batch {batch}: prefill {rows[-1][3]:.0f} vs {rows[-1][4]:.0f} tok/s, "
                      f"decode {rows[-1][5]:.1f} vs {rows[-1][6]:.1f} tok/s", flush=True)
    shutil.rmtree(work, ignore_errors=True)
    bandwidth = {t: read_bandwidth(t) for t in args.threads}
    out = ROOT / "bench" / "results" / "genai"
    out.mkdir(parents=True, exist_ok=True)
    lines = ["# nxrt.genai vs onnxruntime_genai", "",
             f"Command: `python bench/genai/run.py{' --quick' if args.quick else ''}` (nxrt CPU tier: "
             f"{os.environ.get('NXRT_CPU_ISA', 'as detected')}); prompt {prompt_length} tokens, "
             f"{new_tokens} new tokens, best of {rounds} interleaved rounds. Llama-shaped ~125M decoder from "
             "onnxruntime_genai.models.builder (random weights).", "",
             "| precision | threads | batch | prefill tok/s nxrt | prefill tok/s ort-genai | prefill ratio | "
             "decode tok/s nxrt | decode tok/s ort-genai | decode ratio | decode GB/s nxrt | decode GB/s ort-genai |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for p, t, b, po, pt, do, dt, go, gt in rows:
        lines.append(f"| {p} | {t} | {b} | {po:.0f} | {pt:.0f} | {po / pt:.2f} | {do:.1f} | {dt:.1f} | {do / dt:.2f} | "
                     f"{go:.1f} | {gt:.1f} |")
    lines += ["", "Ratios are nxrt / onnxruntime_genai throughput: above 1 means nxrt is faster. Decode GB/s is the "
              "model's weight bytes times decode steps per second.",
              "", "Memory read bandwidth of this machine (numpy max over 1 GiB, best of 3): " +
              ", ".join(f"{t} thread{'s' if t > 1 else ''} {bandwidth[t]:.1f} GB/s" for t in args.threads) +
              ". Decode GB/s counts the initializers each step reads in full (not the embedding table, of which it "
              "reads its tokens' rows) and not the KV cache."]
    (out / "results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
