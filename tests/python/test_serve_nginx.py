"""Scale-out as docs/serving.md shows it: two `nxrt serve` replicas behind nginx (examples/serve/nginx.conf, its
ports replaced by free ones) on loopback. Whole and streamed completions through nginx equal a replica's own, and
both replicas take part of the traffic."""

import concurrent.futures
import json
import pathlib
import re
import shutil
import socket
import subprocess
import time

import pytest

from serve_support import FIXTURE, raw_request, running_server

CONFIG = pathlib.Path(__file__).resolve().parents[2] / "examples" / "serve" / "nginx.conf"
PROMPT = [5, 77, 300, 12, 499, 1, 42]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def served_requests(url):
    _, body, _ = raw_request(url, "GET", "/metrics")
    return sum(float(line.split()[1]) for line in body.splitlines()
               if line.startswith('nxrt_requests_total{route="/v1/completions"'))


def test_two_replicas_behind_nginx(tmp_path):
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if pathlib.Path("/usr/sbin/nginx").exists() else None)
    if nginx is None:
        pytest.skip("nginx is not installed (scripts/setup.sh test installs it)")
    if not FIXTURE.exists():
        pytest.skip(f"the shared genai fixture is not at {FIXTURE}")
    with running_server(FIXTURE, "--model-name", "m") as first, running_server(FIXTURE, "--model-name", "m") as second:
        front = free_port()
        config = CONFIG.read_text()
        config = config.replace("127.0.0.1:8001", first.removeprefix("http://"))
        config = config.replace("127.0.0.1:8002", second.removeprefix("http://"))
        config = config.replace("listen 127.0.0.1:8000", f"listen 127.0.0.1:{front}")
        assert first.removeprefix("http://") in config and f":{front};" in config
        (tmp_path / "nginx.conf").write_text(config)
        process = subprocess.Popen([nginx, "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"),
                                    "-g", "daemon off;"], stderr=subprocess.PIPE, text=True)
        try:
            url = f"http://127.0.0.1:{front}"
            deadline = time.time() + 20
            while raw_request(url, "GET", "/health")[0] != 200:
                assert process.poll() is None, process.stderr.read()
                assert time.time() < deadline, "nginx did not come up"
                time.sleep(0.05)
            body = json.dumps({"model": "m", "prompt": PROMPT, "max_tokens": 16, "temperature": 0})
            status, direct, _ = raw_request(first, "POST", "/v1/completions", body)
            assert status == 200
            expected = json.loads(direct)["choices"][0]["text"]
            before = served_requests(first), served_requests(second)

            def through(i):
                return raw_request(url, "POST", "/v1/completions", body)

            with concurrent.futures.ThreadPoolExecutor(16) as pool:
                results = list(pool.map(through, range(64)))
            assert all(status == 200 for status, _, _ in results)
            assert all(json.loads(text)["choices"][0]["text"] == expected for _, text, _ in results)
            shares = served_requests(first) - before[0], served_requests(second) - before[1]
            assert sum(shares) == 64 and min(shares) > 0, shares
            streamed = json.dumps({"model": "m", "prompt": PROMPT, "max_tokens": 16, "temperature": 0,
                                   "stream": True})
            status, text, headers = raw_request(url, "POST", "/v1/completions", streamed)
            assert status == 200 and headers.get("Content-Type", "").startswith("text/event-stream")
            chunks = [json.loads(line[6:]) for line in text.splitlines()
                      if line.startswith("data: {")]
            assert "".join(c["choices"][0]["text"] for c in chunks) == expected
            assert text.rstrip().endswith("data: [DONE]")
        finally:
            process.terminate()
            process.wait(timeout=20)
