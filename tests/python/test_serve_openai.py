"""`nxrt serve` against the official `openai` client on loopback, on ONNX Runtime GenAI's GPT-2 test folder
(vocabulary 1000: prompts are token ids, or text whose GPT-2 tokens fall below 1000): routes, greedy output equal
to nxrt.genai's (alone and under concurrent requests that share decoder steps), streaming, n > 1, stop strings,
exact usage, and the errors mapping to the client's exception classes."""

import concurrent.futures
import json
import pathlib
import shutil

import numpy as np
import pytest

import nxrt.genai as genai
import serve_support
from serve_support import FIXTURE, raw_request, running_server

openai = pytest.importorskip("openai", reason="the openai client is not installed (requirements/test.txt)")

# A chat template whose output tokenizes below the fixture's vocabulary of 1000.
CHAT_TEMPLATE = ("{% for m in messages %}{{ m['role'][0] }}:{{ m['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}a:{% endif %}")
PROMPT = [5, 77, 300, 12, 499, 1, 42]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    if not FIXTURE.exists():
        pytest.skip(f"the shared genai fixture is not at {FIXTURE}")
    target = tmp_path_factory.mktemp("serve") / "tiny-gpt2"
    shutil.copytree(FIXTURE, target)
    config = json.loads((target / "tokenizer_config.json").read_text())
    config["chat_template"] = CHAT_TEMPLATE
    (target / "tokenizer_config.json").write_text(json.dumps(config))
    return target


@pytest.fixture(scope="module")
def server(folder):
    with running_server(folder, "--max-batch", "8", "--max-queue", "32") as url:
        yield url


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server + "/v1", api_key="unused", max_retries=0, timeout=60)


def greedy_alone(folder, prompt, count):
    """The reference: nxrt.genai's greedy tokens for `prompt` alone, through the fixture's end id 98."""
    return serve_support.greedy_alone(folder, prompt, count, end_id=98)


def decode(folder, tokens):
    model = genai.Model(str(folder))
    return genai.Tokenizer(model).decode(np.array([t for t in tokens if t != 98], np.int32))


def test_models_health_and_metrics(server, client):
    assert [m.id for m in client.models.list().data] == ["tiny-gpt2"]
    status, body, _ = raw_request(server, "GET", "/health")
    assert status == 200 and json.loads(body)["status"] == "ok"
    status, body, headers = raw_request(server, "GET", "/metrics")
    assert status == 200 and "nxrt_batch_size" in body and "nxrt_time_to_first_token_seconds_bucket" in body


def test_greedy_completion_matches_genai_with_exact_usage(folder, client):
    expected = greedy_alone(folder, PROMPT, 12)
    result = client.completions.create(model="tiny-gpt2", prompt=PROMPT, max_tokens=12, temperature=0)
    choice = result.choices[0]
    assert choice.text == decode(folder, expected)
    assert choice.finish_reason == ("stop" if expected[-1] == 98 else "length")
    assert result.usage.prompt_tokens == len(PROMPT)
    assert result.usage.completion_tokens == len(expected)
    assert result.usage.total_tokens == len(PROMPT) + len(expected)
    assert result.object == "text_completion" and result.id.startswith("cmpl-")


def test_stream_equals_whole_response_and_reports_usage(client):
    whole = client.completions.create(model="tiny-gpt2", prompt=PROMPT, max_tokens=20, temperature=0)
    chunks = list(client.completions.create(model="tiny-gpt2", prompt=PROMPT, max_tokens=20, temperature=0,
                                            stream=True, stream_options={"include_usage": True}))
    assert len({c.id for c in chunks}) == 1
    text = "".join(c.choices[0].text for c in chunks if c.choices)
    assert text == whole.choices[0].text
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finishes == [whole.choices[0].finish_reason]
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == whole.usage.completion_tokens
    assert all(c.usage is None for c in chunks[:-1])


def test_chat_with_n_choices_streams_role_first(folder, client):
    messages = [{"role": "system", "content": "on it is"}, {"role": "user", "content": [{"type": "text", "text": "I am"}]}]
    whole = client.chat.completions.create(model="tiny-gpt2", messages=messages, max_tokens=10, temperature=0, n=2)
    assert len(whole.choices) == 2 and whole.choices[0].message.content == whole.choices[1].message.content
    assert whole.choices[0].message.role == "assistant"
    prompt = list(genai.Tokenizer(genai.Model(str(folder))).encode("s:on it is\nu:I am\na:", add_special_tokens=False))
    assert max(prompt) < 1000 and whole.usage.prompt_tokens == len(prompt)
    assert whole.choices[0].message.content == decode(folder, greedy_alone(folder, prompt, 10))
    stream = list(client.chat.completions.create(model="tiny-gpt2", messages=messages, max_tokens=10, temperature=0,
                                                 n=2, stream=True))
    for index in (0, 1):
        deltas = [c.choices[0].delta for c in stream if c.choices and c.choices[0].index == index]
        assert deltas[0].role == "assistant"
        assert "".join(d.content or "" for d in deltas) == whole.choices[index].message.content


def test_stop_string_cuts_the_text(client):
    whole = client.completions.create(model="tiny-gpt2", prompt=PROMPT, max_tokens=24, temperature=0).choices[0].text
    assert len(whole) > 6
    stop = whole[3:6]
    cut = client.completions.create(model="tiny-gpt2", prompt=PROMPT, max_tokens=24, temperature=0, stop=[stop])
    assert cut.choices[0].text == whole[: whole.index(stop)] and cut.choices[0].finish_reason == "stop"
    streamed = client.completions.create(model="tiny-gpt2", prompt=PROMPT, max_tokens=24, temperature=0, stop=stop,
                                         stream=True)
    assert "".join(c.choices[0].text for c in streamed if c.choices) == cut.choices[0].text


def test_seeded_sampling_repeats_and_logprobs_are_shaped(client):
    args = dict(model="tiny-gpt2", prompt=PROMPT, max_tokens=8, temperature=0.9, top_p=0.9, seed=7)
    assert client.completions.create(**args).choices[0].text == client.completions.create(**args).choices[0].text
    chat = client.chat.completions.create(model="tiny-gpt2", messages=[{"role": "user", "content": "I am"}],
                                          max_tokens=4, temperature=0, logprobs=True, top_logprobs=3)
    content = chat.choices[0].logprobs.content
    assert 1 <= len(content) <= 4
    for entry in content:
        assert entry.logprob <= 0 and len(entry.top_logprobs) == 3
        assert entry.top_logprobs[0].logprob == pytest.approx(entry.logprob)  # greedy takes the most likely


def test_concurrent_greedy_requests_share_steps_and_match_genai_alone(folder, server, client):
    prompts = [[5 + i, 77, 300 - i][: 1 + i % 3] + [12] * (i % 4) for i in range(12)]
    budgets = [6 + (i * 5) % 17 for i in range(12)]

    def ask(i):
        return client.completions.create(model="tiny-gpt2", prompt=prompts[i], max_tokens=budgets[i], temperature=0)

    steps_before = metric(server, "nxrt_decode_steps_total")
    with concurrent.futures.ThreadPoolExecutor(12) as pool:
        results = list(pool.map(ask, range(12)))
    generated = 0
    for i, result in enumerate(results):
        expected = greedy_alone(folder, prompts[i], budgets[i])
        assert result.choices[0].text == decode(folder, expected), f"request {i}"
        generated += result.usage.completion_tokens
    # Shared steps: fewer decoder steps than tokens generated one request at a time.
    assert metric(server, "nxrt_decode_steps_total") - steps_before < generated


def metric(server, name):
    _, body, _ = raw_request(server, "GET", "/metrics")
    for line in body.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} not in /metrics")


def test_errors_raise_the_clients_exception_classes(client):
    with pytest.raises(openai.NotFoundError):
        client.completions.create(model="no-such-model", prompt=PROMPT, max_tokens=2)
    for bad in (dict(temperature=3), dict(top_p=0), dict(max_tokens=0), dict(n=0), dict(stop=["a"] * 5),
                dict(logit_bias={"5000": 1}), dict(presence_penalty=9)):
        with pytest.raises(openai.BadRequestError):
            client.completions.create(model="tiny-gpt2", prompt=PROMPT, **{"max_tokens": 2, **bad})
    with pytest.raises(openai.BadRequestError) as error:
        client.completions.create(model="tiny-gpt2", prompt=PROMPT, max_tokens=510)
    assert "maximum context length" in str(error.value)
    with pytest.raises(openai.BadRequestError):
        client.completions.create(model="tiny-gpt2", prompt=[5, 1000], max_tokens=2)
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="tiny-gpt2", messages=[{"role": "wizard", "content": "x"}])


def test_json_mode_and_tools_are_refused_not_ignored(client):
    messages = [{"role": "user", "content": "I am"}]
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}
    for extra, param in ((dict(response_format={"type": "json_object"}), "response_format"),
                         (dict(response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": {}}}),
                          "response_format"),
                         (dict(tools=[tool]), "tools")):
        with pytest.raises(openai.BadRequestError) as error:
            client.chat.completions.create(model="tiny-gpt2", messages=messages, max_tokens=2, **extra)
        assert error.value.body["param"] == param and "not supported" in error.value.body["message"]
    for accepted in (dict(response_format={"type": "text"}), dict(tools=[tool], tool_choice="none")):
        reply = client.chat.completions.create(model="tiny-gpt2", messages=messages, max_tokens=2, **accepted)
        assert reply.choices[0].message.tool_calls is None and reply.usage.completion_tokens >= 1


def test_api_key_is_required_when_set(folder):
    with running_server(folder, "--api-key", "sesame") as url:
        wrong = openai.OpenAI(base_url=url + "/v1", api_key="nope", max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            wrong.models.list()
        right = openai.OpenAI(base_url=url + "/v1", api_key="sesame", max_retries=0)
        assert right.completions.create(model="tiny-gpt2", prompt=PROMPT, max_tokens=2).usage.completion_tokens >= 1


def test_tokenize_and_detokenize_round_trip(server):
    status, body, _ = raw_request(server, "POST", "/tokenize", json.dumps({"prompt": "on it is"}))
    assert status == 200 and json.loads(body)["tokens"] == [261, 340, 318]
    status, body, _ = raw_request(server, "POST", "/detokenize", json.dumps({"tokens": [261, 340, 318]}))
    assert status == 200 and json.loads(body)["prompt"] == "on it is"


def test_a_full_queue_raises_rate_limit_error(folder):
    with running_server(folder, "--max-queue", "0") as url:  # no request may wait: every completion is refused
        client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
        with pytest.raises(openai.RateLimitError) as error:
            client.completions.create(model="tiny-gpt2", prompt=PROMPT, max_tokens=2)
        assert error.value.response.headers.get("retry-after") == "1"
        assert client.models.list().data[0].id == "tiny-gpt2"  # the rest of the server answers


def test_next_turn_reuses_the_kept_prefix_in_the_mask_layout(folder):
    """The GPT-2 fixture keeps its cache in the mask layout (combined past per layer, rows right-aligned under the
    attention mask): a conversation's next turn still takes the kept cache of the sequence that just left."""
    serve_support.check_next_turn_reuses_the_prefix(folder, end_id=98)
