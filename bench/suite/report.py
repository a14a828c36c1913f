"""Writes the suite's results: a markdown table, a JSON dump and a bar chart of the nxrt/onnxruntime ratios.

A row (see ``run.bench_case``) holds, per runtime ``r`` in ("nxrt", "ort"): ``r_ms`` (median ms per run),
``r_create_ms``, ``r_error`` (first line of the error, when the runtime failed) and ``r_rss`` (the child
process's ``{"peak_mb", "baseline_mb"}`` or ``{"error"}``); plus ``ratio`` = nxrt_ms / ort_ms and ``check``
("ok" or a mismatch note) when both ran.
"""

import json
import math

COLUMNS = ["model", "threads", "nxrt ms", "ORT ms", "ratio", "nxrt create ms", "ORT create ms",
           "nxrt peak RSS MB", "ORT peak RSS MB", "check"]


def fmt_ms(value):
    if value is None:
        return "-"
    if value < 0.1:
        return f"{value:.4f}"
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


def latency_cell(row, runtime):
    if f"{runtime}_error" in row:
        return "error: " + row[f"{runtime}_error"].replace("|", "/")
    return fmt_ms(row.get(f"{runtime}_ms"))


def create_cell(row, runtime):
    value = row.get(f"{runtime}_create_ms")
    return "-" if value is None else f"{value:.1f}"


def rss_cell(row, runtime):
    rss = row.get(f"{runtime}_rss")
    if not rss:
        return "-"
    if "error" in rss:
        return "error: " + rss["error"].replace("|", "/")
    return f"{rss['peak_mb']:.0f}"


def ratio_cell(row):
    ratio = row.get("ratio")
    return "-" if ratio is None else f"{ratio:.2f}"


def table_cells(row):
    return [row["model"], str(row["threads"]), latency_cell(row, "nxrt"), latency_cell(row, "ort"), ratio_cell(row),
            create_cell(row, "nxrt"), create_cell(row, "ort"), rss_cell(row, "nxrt"), rss_cell(row, "ort"),
            row.get("check", "-")]


def geometric_means(rows, threads):
    """{threads: (geomean of ratio, rows counted)} over the rows where both runtimes produced a time."""
    result = {}
    for count in threads:
        ratios = [row["ratio"] for row in rows if row["threads"] == count and row.get("ratio")]
        if ratios:
            result[count] = (math.exp(sum(math.log(r) for r in ratios) / len(ratios)), len(ratios))
    return result


def console_line(row):
    cells = table_cells(row)
    return (f"{cells[0]:30s} t={cells[1]}  nxrt {cells[2]:>10s}  ort {cells[3]:>10s}  ratio {cells[4]:>5s}  "
            f"rss {cells[7]}/{cells[8]} MB  {cells[9]}")


def write_markdown(path, meta, rows):
    env = meta["environment"]
    settings = meta["settings"]
    lines = [
        "# nxrt vs onnxruntime on CPU",
        "",
        f"Command: `{meta['command']}` ({'quick' if meta['quick'] else 'full'}; "
        f"{settings['rounds']} interleaved rounds of ~{settings['target_ms']:.0f} ms per runtime; "
        f"wall time {meta['wall_s']:.0f} s).",
        "",
        f"Machine: {env['processor']}, {env['cpus']} CPUs, {env['machine']}; {env['date_utc']} UTC. "
        f"nxrt {env['nxrt']}, onnxruntime {env['onnxruntime']}, numpy {env['numpy']}, Python {env['python']}. "
        f"nxrt tier: {env.get('nxrt_cpu_isa', 'native')}; onnxruntime kernels: "
        f"{env.get('onnxruntime_cpu', 'its own dispatch on this CPU')}.",
        "",
        "Latency is the median over rounds of the mean time of one `run(None, feeds)` call. "
        "ratio = nxrt ms / ORT ms (below 1 means nxrt is faster). Create ms is the time of the "
        "`InferenceSession(...)` constructor from model bytes. Peak RSS is `ru_maxrss` of a fresh child process "
        f"that imports the runtime, creates a session with {meta['rss_threads']} thread and runs it "
        f"{meta['rss_runs']} times; it includes the Python interpreter, numpy, the runtime library and the input "
        "arrays (see bench/suite/README.md). check compares outputs with allclose.",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(COLUMNS) - 2) + ["---"]) + "|",
    ]
    for row in rows:
        lines.append("| " + " | ".join(table_cells(row)) + " |")
    lines += ["", "Geometric mean of the ratios (nxrt / ORT):", ""]
    for count, (mean, n) in geometric_means(rows, meta["threads"]).items():
        lines.append(f"- {count} thread{'s' if count != 1 else ''}: **{mean:.2f}** over {n} models")
    mismatches = [row for row in rows if row.get("check", "ok") != "ok"]
    errors = [row for row in rows if "nxrt_error" in row or "ort_error" in row]
    lines += ["", f"Output mismatches: {len(mismatches)}; rows with a runtime error: {len(errors)}.", "",
              "Models:", ""]
    seen = set()
    for row in rows:
        if row["model"] not in seen:
            seen.add(row["model"])
            lines.append(f"- {row['model']}: {row.get('notes', '')}")
    lines += ["", "This machine is small and shared; rerun and compare before trusting differences under ~10%.", ""]
    path.write_text("\n".join(lines))


def write_json(path, meta, rows):
    means = {str(count): {"geomean_ratio": mean, "models": n}
             for count, (mean, n) in geometric_means(rows, meta["threads"]).items()}
    path.write_text(json.dumps({"meta": meta, "geomean": means, "rows": rows}, indent=2) + "\n")


def write_chart(path, rows, threads):
    """Horizontal grouped bars of nxrt/ORT per model and thread count; returns the path, or None without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("note: matplotlib is not importable, skipping ratios.png (.venv/bin/pip install matplotlib)")
        return None

    names = []
    for row in rows:
        if row["model"] not in names:
            names.append(row["model"])
    height = 0.8 / max(1, len(threads))
    fig, ax = plt.subplots(figsize=(9, 0.55 * len(names) + 1.5))
    for index, count in enumerate(threads):
        values = {row["model"]: row.get("ratio") for row in rows if row["threads"] == count}
        positions = [i + index * height for i in range(len(names))]
        bars = [values.get(name) or 0.0 for name in names]
        ax.barh(positions, bars, height=height, label=f"{count} thread{'s' if count != 1 else ''}")
        for y, name in zip(positions, names):
            if values.get(name) is None:
                ax.text(0.02, y, "error", va="center", fontsize=7, color="red")
            else:
                ax.text(values[name], y, f" {values[name]:.2f}", va="center", fontsize=7)
    ax.axvline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_yticks([i + height * (len(threads) - 1) / 2 for i in range(len(names))])
    ax.set_yticklabels(names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("latency ratio nxrt / onnxruntime (lower is better for nxrt)")
    ax.set_title("nxrt vs onnxruntime, median latency ratio")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
