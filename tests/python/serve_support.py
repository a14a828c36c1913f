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


def check_next_turn_reuses_the_prefix(folder, end_id):
    """The next turn of a conversation (the last prompt, its completion, then new tokens) reuses the kept cache of
    the sequence that just left: /metrics counts the reused positions, usage reports them as cached_tokens, a prompt
    sharing no prefix reuses nothing, and the completion is still the one nxrt.genai's Generator gives the whole
    prompt alone. `end_id`: the folder's end-of-sequence id."""
    import json
    import re

    import numpy as np

    first = [7 + (i * 37) % 400 for i in range(24)]
    usages = []

    def complete(url, prompt, count):
        body = json.dumps({"model": "m", "prompt": prompt, "max_tokens": count, "temperature": 0, "logprobs": 0})
        status, text, _ = raw_request(url, "POST", "/v1/completions", body, timeout=120)
        assert status == 200, text
        body = json.loads(text)
        usages.append(body["usage"])
        return body["choices"][0]

    def reused(url):
        status, text, _ = raw_request(url, "GET", "/metrics", None, timeout=30)
        assert status == 200
        return int(re.search(r"^nxrt_prompt_tokens_reused_total (\d+)$", text, re.M).group(1))

    with running_server(folder, "--model-name", "m", "--max-batch", "2") as url:
        complete(url, first, 6)
        assert reused(url) == 0
        answer = greedy_alone(folder, first, 6, end_id=end_id)
        second = first + answer + [11, 12, 13]
        choice = complete(url, second, 8)
        cached = len(first) + len(answer) - 1  # the last generated token was never run through the decoder
        assert reused(url) == cached
        unrelated = complete(url, [400 - t for t in first], 4)  # shares no prefix: nothing more reused
        assert reused(url) == cached
    expected = greedy_alone(folder, second, 8)
    if end_id in expected:
        expected = expected[: expected.index(end_id)]
    import nxrt.genai as genai
    tokenizer = genai.Tokenizer(genai.Model(str(folder)))
    assert choice["text"] == tokenizer.decode(np.array(expected, np.int32))
    assert unrelated["finish_reason"] in ("stop", "length")
    # usage.prompt_tokens_details.cached_tokens as the OpenAI API reports a prompt cache hit
    assert [u["prompt_tokens_details"]["cached_tokens"] for u in usages] == [0, cached, 0]
    assert [u["prompt_tokens"] for u in usages] == [len(first), len(second), len(first)]
