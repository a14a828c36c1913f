"""Starting `nxrt serve` for tests (port 0, the address read from its first stdout line) and raw HTTP to it."""

import contextlib
import http.client
import os
import pathlib
import subprocess
import time
import urllib.parse

FIXTURE = pathlib.Path(__file__).resolve().parents[3] / "shared" / "genai" / "tiny-random-gpt2-fp32"


def cli_path():
    path = os.environ.get("NXRT_CLI")
    if path:
        return path
    return str(pathlib.Path(__file__).resolve().parents[2] / "build" / "nxrt")


@contextlib.contextmanager
def running_server(folder, *options, stderr_path=None):
    """Yields the base URL ("http://127.0.0.1:PORT") once /health answers 200; SIGTERM at the end, which must exit
    the server with 0."""
    log = open(stderr_path, "wb") if stderr_path else subprocess.DEVNULL
    process = subprocess.Popen([cli_path(), "serve", str(folder), "--port", "0", "--threads", "1", *(o for o in ("--quiet",) if not stderr_path), *options],
                               stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        line = process.stdout.readline()
        assert "listening on " in line, f"nxrt serve printed {line!r}"
        url = line.split("listening on ")[1].split()[0]
        deadline = time.time() + 60
        while True:
            status, _, _ = raw_request(url, "GET", "/health")
            if status == 200:
                break
            assert time.time() < deadline and process.poll() is None, "the server did not get ready"
            time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        try:
            code = process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
        if log is not subprocess.DEVNULL:
            log.close()
    assert code == 0, f"nxrt serve exited with {code} after SIGTERM"


def raw_request(url, method, path, body=None, headers=None, timeout=30):
    """(status, body text, headers) of one HTTP request; status 0 when the connection fails."""
    parsed = urllib.parse.urlparse(url)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers={"Content-Type": "application/json", **(headers or {})})
        response = connection.getresponse()
        return response.status, response.read().decode("utf-8", "replace"), dict(response.getheaders())
    except (ConnectionError, OSError):
        return 0, "", {}
    finally:
        connection.close()


def greedy_alone(folder, prompt, count, end_id=None):
    """nxrt.genai's greedy continuation of `prompt` by a Generator alone: up to `count` tokens, stopping after
    `end_id` (kept in the list) when given."""
    import nxrt.genai as genai

    model = genai.Model(str(folder))
    params = genai.GeneratorParams(model)
    params.set_search_options(max_length=len(prompt) + count, do_sample=False)
    generator = genai.Generator(model, params)
    generator.append_tokens(prompt)
    out = []
    while not generator.is_done():
        generator.generate_next_token()
        out.append(int(generator.get_next_tokens()[0]))
        if out[-1] == end_id:
            break
    return out
