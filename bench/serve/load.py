"""Load on `nxrt serve` over loopback (docs/serving.md): streaming clients against one server, on ONNX Runtime
GenAI's GPT-2 test folder by default (or --folder, e.g. a builder model; prompts are then token ids below 1000).

Phases, each a fixed request count:
  single    one streaming client at a time: the single-stream decode rate (tokens/s), at the clients (Python
            clients in this process) and in the engine (GET /metrics: generated tokens per second of decoder steps)
  batch8    8 concurrent streaming clients: aggregate decode tokens/s and its ratio to single (batching works when
            the ratio is well above 1; the goal is 3x)
  c64       64 concurrent streaming clients (--max-queue above 64): failures, aggregate tokens/s, time to first
            token p50 / p99
  c256      256 concurrent clients with a queue of 64: only 200 and 429 may come back
  rss       --rss-requests sequential-ish requests (8 at a time); the server's RSS after the first 10% and at the end

End-of-sequence is biased away (logit_bias -100) so every request generates exactly --tokens tokens.
Writes a markdown table to bench/results/serve/results.md (or --out) and prints it."""

import argparse
import concurrent.futures
import http.client
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "python"))
from serve_support import FIXTURE  # noqa: E402


def start(folder, cli, *options):
    process = subprocess.Popen([cli, "serve", str(folder), "--port", "0", "--model-name", "m", "--quiet", *options],
                               stdout=subprocess.PIPE, text=True)
    url = process.stdout.readline().split("listening on ")[1].split()[0]
    host, port = url.removeprefix("http://").split(":")
    while True:
        try:
            c = http.client.HTTPConnection(host, int(port), timeout=5)
            c.request("GET", "/health")
            if c.getresponse().status == 200:
                break
        except OSError:
            pass
        time.sleep(0.05)
    return process, host, int(port)


def stream_request(host, port, prompt, tokens, eos):
    """(status, time to first chunk, total time, tokens generated as the usage chunk counts them)."""
    body = json.dumps({"model": "m", "prompt": prompt, "max_tokens": tokens, "temperature": 0, "stream": True,
                       "stream_options": {"include_usage": True}, "logit_bias": {str(e): -100 for e in eos}})
    start = time.perf_counter()
    connection = http.client.HTTPConnection(host, port, timeout=300)
    try:
        connection.request("POST", "/v1/completions", body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        if response.status != 200:
            response.read()
            return response.status, None, time.perf_counter() - start, 0
        first, received = None, 0
        for line in response:
            if line.startswith(b"data: {"):
                chunk = json.loads(line[6:])
                if chunk["choices"] and first is None:
                    first = time.perf_counter() - start
                if not chunk["choices"]:
                    received = chunk["usage"]["completion_tokens"]
        return 200, first, time.perf_counter() - start, received
    except OSError:
        return 0, None, time.perf_counter() - start, 0
    finally:
        connection.close()


def server_counters(host, port):
    connection = http.client.HTTPConnection(host, port, timeout=30)
    connection.request("GET", "/metrics")
    text = connection.getresponse().read().decode()
    values = {}
    for line in text.splitlines():
        if line.startswith("nxrt_") and " " in line and "{" not in line:
            name, value = line.split()
            values[name] = float(value)
    return values


def phase(host, port, clients, requests, tokens, eos):
    before = server_counters(host, port)
    prompts = [[5 + i % 900, 77, 300, 12][: 1 + i % 4] for i in range(requests)]
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        results = list(pool.map(lambda i: stream_request(host, port, prompts[i], tokens, eos), range(requests)))
    wall = time.perf_counter() - start
    statuses = {}
    for status, _, _, _ in results:
        statuses[status] = statuses.get(status, 0) + 1
    ttft = sorted(r[1] for r in results if r[1] is not None)
    generated = sum(r[3] for r in results)
    after = server_counters(host, port)
    delta = {k: after[k] - before.get(k, 0.0) for k in after}
    engine_rate = delta["nxrt_generation_tokens_total"] / max(delta["nxrt_decode_seconds_total"], 1e-9)
    return {"wall_s": wall, "engine_tokens_per_s": engine_rate,
            "tokens_per_step": delta["nxrt_generation_tokens_total"] / max(delta["nxrt_decode_steps_total"], 1), "statuses": statuses, "tokens": generated, "tokens_per_s": generated / wall,
            "ttft_p50_ms": 1e3 * ttft[len(ttft) // 2] if ttft else None,
            "ttft_p99_ms": 1e3 * ttft[min(len(ttft) - 1, int(len(ttft) * 0.99))] if ttft else None}


def rss_kib(pid):
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def batching_rounds(args, common, eos):
    """Alternates the single-stream and 8-stream phases; prints each round's engine and client rates and the ratios
    of the best rates and of the medians."""
    process, host, port = start(args.folder, args.cli, *common, "--max-queue", "512")
    single, batch8 = [], []
    try:
        phase(host, port, 8, 16, 8, eos)  # warm-up
        for r in range(args.batching_rounds):
            single.append(phase(host, port, 1, 16, args.tokens, eos))
            batch8.append(phase(host, port, 8, 64, args.tokens, eos))
            print(f"round {r}: single {single[-1]['engine_tokens_per_s']:.0f} tok/s (engine), "
                  f"8 streams {batch8[-1]['engine_tokens_per_s']:.0f}; clients {single[-1]['tokens_per_s']:.0f}, "
                  f"{batch8[-1]['tokens_per_s']:.0f}", flush=True)
    finally:
        process.terminate()
        process.wait(timeout=60)
    for key, where in (("engine_tokens_per_s", "engine"), ("tokens_per_s", "clients")):
        s = [x[key] for x in single]
        b = [x[key] for x in batch8]
        print(f"{where}: best 8-stream / best single {max(b) / max(s):.2f}x, median / median "
              f"{statistics.median(b) / statistics.median(s):.2f}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--folder", default=str(FIXTURE))
    parser.add_argument("--cli", default=os.environ.get("NXRT_CLI", str(ROOT / "build" / "nxrt")))
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--max-batch", type=int, default=16)
    parser.add_argument("--rss-requests", type=int, default=10000)
    parser.add_argument("--quick", action="store_true", help="fewer requests per phase (a smoke run)")
    parser.add_argument("--batching-rounds", type=int, default=0,
                        help="only the batching ratio: this many alternations of the single and 8-stream phases "
                             "on one server (the host's noise moves single runs by 20-30%%), then exit")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "serve" / "results.md"))
    args = parser.parse_args()
    config = json.loads((pathlib.Path(args.folder) / "genai_config.json").read_text())
    eos = config["model"]["eos_token_id"]
    eos = eos if isinstance(eos, list) else [eos]
    scale = 4 if args.quick else 1
    common = ["--threads", str(args.threads), "--max-batch", str(args.max_batch)]
    rows = []
    if args.batching_rounds > 0:
        batching_rounds(args, common, eos)
        return

    process, host, port = start(args.folder, args.cli, *common, "--max-queue", "512")
    try:
        single = phase(host, port, 1, 16 // scale, args.tokens, eos)
        batch8 = phase(host, port, 8, 64 // scale, args.tokens, eos)
        c64 = phase(host, port, 64, 512 // scale, args.tokens, eos)
        rows += [("single stream", single), ("8 concurrent", batch8), ("64 concurrent", c64)]
        rss = []
        total = args.rss_requests // scale
        done = 0
        while done < total:
            count = min(total - done, max(total // 10, 8))
            phase(host, port, 8, count, 8, eos)
            done += count
            rss.append(rss_kib(process.pid))
    finally:
        process.terminate()
        process.wait(timeout=60)
    process, host, port = start(args.folder, args.cli, *common, "--max-queue", "64")
    try:
        c256 = phase(host, port, 256, 1024 // scale, args.tokens, eos)
        rows.append(("256 concurrent, queue 64", c256))
    finally:
        process.terminate()
        process.wait(timeout=60)

    ratio = batch8["tokens_per_s"] / single["tokens_per_s"]
    engine_ratio = batch8["engine_tokens_per_s"] / single["engine_tokens_per_s"]
    lines = [f"# nxrt serve under load ({pathlib.Path(args.folder).name}, {args.tokens} tokens per request, "
             f"--threads {args.threads}, --max-batch {args.max_batch})", "",
             "| phase | requests by status | wall s | tokens/s at the clients | tokens/s of the engine | "
             "tokens per step | TTFT p50 ms | TTFT p99 ms |",
             "|---|---|---|---|---|---|---|---|"]
    for name, r in rows:
        fmt = lambda v: "-" if v is None else f"{v:.1f}"  # noqa: E731
        lines.append(f"| {name} | {json.dumps(r['statuses'])} | {r['wall_s']:.2f} | {r['tokens_per_s']:.0f} | "
                     f"{r['engine_tokens_per_s']:.0f} | {r['tokens_per_step']:.1f} | {fmt(r['ttft_p50_ms'])} | "
                     f"{fmt(r['ttft_p99_ms'])} |")
    lines += ["", f"Batching: 8 concurrent streams get {ratio:.2f}x the single-stream rate at the clients, "
              f"{engine_ratio:.2f}x in the engine (tokens per second of decoder steps).",
              f"RSS over {total} requests (KiB, after each tenth): {rss}; last / first "
              f"{rss[-1] / rss[0]:.3f}." if rss else ""]
    text = "\n".join(lines) + "\n"
    print(text)
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)


if __name__ == "__main__":
    main()
