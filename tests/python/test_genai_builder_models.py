"""Decoders written by onnxruntime_genai.models.builder, run by nxrt and onnxruntime side by side: small random-weight
Hugging Face checkpoints are made here with transformers (no download), converted at fp32 and at int4 for the
CPU, and each runs a prefill plus 16 greedy decode steps with its growing past_key_values cache.

Tolerances: fp32 logits within 1e-4 of the largest logit, with the same greedy tokens. int4 models use MatMulNBits
with accuracy_level 4, where A is quantized to int8 per block by both runtimes alike (one MatMulNBits agrees to
~1e-6); a float difference upstream of ~1e-7 can still move one activation across an int8 rounding boundary, a
step of max|a| / 127, so int4 logits agree within 1e-2 of the largest, with the same greedy tokens while
onnxruntime's top two logits are further apart than that."""

import json
import pathlib
import subprocess
import sys

import numpy as np
import onnxruntime
import pytest

import nxrt

transformers = pytest.importorskip("transformers", reason="transformers is not installed (requirements/heavy.txt)")
pytest.importorskip("onnxruntime_genai", reason="onnxruntime-genai is not installed (requirements/heavy.txt)")
torch = pytest.importorskip("torch", reason="torch is not installed (requirements/heavy.txt)")

TOKENIZER = pathlib.Path(__file__).resolve().parents[3] / "shared" / "genai" / "tiny-random-gpt2-fp32"
SMALL = dict(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=256)
ARCHITECTURES = {
    "llama": ("LlamaConfig", "LlamaForCausalLM", {}),
    "mistral": ("MistralConfig", "MistralForCausalLM", {"sliding_window": None}),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM", {}),
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM", {"head_dim": 16}),
    "phi3": ("Phi3Config", "Phi3ForCausalLM",
             {"pad_token_id": 0, "eos_token_id": 2, "original_max_position_embeddings": 256}),
    "gemma": ("GemmaConfig", "GemmaForCausalLM", {"head_dim": 16}),
}
STEPS = 16


def write_checkpoint(name, folder):
    config_class, model_class, extra = ARCHITECTURES[name]
    torch.manual_seed(0)
    config = getattr(transformers, config_class)(**SMALL, **extra)
    model = getattr(transformers, model_class)(config)
    model.save_pretrained(folder)
    # The builder saves a tokenizer with the model: the GPT-2 one of the shared genai fixture (ids above the
    # model's vocabulary are never fed).
    for file in ("tokenizer.json", "tokenizer_config.json", "vocab.json"):
        (folder / file).write_bytes((TOKENIZER / file).read_bytes())


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """{(architecture, precision): folder with model.onnx}, built once per module."""
    if not TOKENIZER.exists():
        pytest.skip(f"the shared genai tokenizer is not at {TOKENIZER}")
    root = tmp_path_factory.mktemp("builder")
    folders = {}

    def get(name, precision):
        key = (name, precision)
        if key not in folders:
            checkpoint = root / f"{name}_hf"
            if not checkpoint.exists():
                write_checkpoint(name, checkpoint)
            out = root / f"{name}_{precision}"
            done = subprocess.run([sys.executable, "-m", "onnxruntime_genai.models.builder", "-m", f"local/{name}",
                                   "-i", str(checkpoint), "-o", str(out), "-p", precision, "-e", "cpu"],
                                  capture_output=True, text=True, timeout=900)
            assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
            folders[key] = out
        return folders[key]

    return get


def greedy_logits(session, folder, prompt):
    """Prefill then STEPS greedy steps; returns the last-position logits of every step and the tokens."""
    config = json.loads((folder / "genai_config.json").read_text())["model"]["decoder"]
    layers, kv_heads, head = config["num_hidden_layers"], config["num_key_value_heads"], config["head_size"]
    names = {i.name for i in session.get_inputs()}
    ids = np.array([prompt], np.int64)
    mask = np.ones_like(ids)
    past = {f"past_key_values.{i}.{kind}": np.zeros((1, kv_heads, 0, head), np.float32)
            for i in range(layers) for kind in ("key", "value")}
    outputs = [o.name for o in session.get_outputs()]
    logits, tokens = [], []
    position = 0
    for _ in range(STEPS + 1):
        feeds = {"input_ids": ids, "attention_mask": mask, **past}
        if "position_ids" in names:
            feeds["position_ids"] = np.arange(position, position + ids.shape[1], dtype=np.int64)[None, :]
        result = dict(zip(outputs, session.run(None, feeds)))
        last = result["logits"][0, -1].astype(np.float64)
        logits.append(last)
        tokens.append(int(last.argmax()))
        position += ids.shape[1]
        ids = np.array([[tokens[-1]]], np.int64)
        mask = np.ones((1, position + 1), np.int64)
        past = {name: result[name.replace("past_key_values", "present")] for name in past}
    return np.stack(logits), tokens


@pytest.mark.parametrize("precision", ["fp32", "int4"])
@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_builder_decoder_matches_onnxruntime(built, name, precision):
    folder = built(name, precision)
    model = str(folder / "model.onnx")
    prompt = [5, 77, 300, 12, 499, 1, 42]
    ours, our_tokens = greedy_logits(nxrt.InferenceSession(model), folder, prompt)
    theirs, their_tokens = greedy_logits(
        onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"]), folder, prompt)
    scale = np.abs(theirs).max()
    tolerance = 1e-4 if precision == "fp32" else 1e-2
    if precision == "fp32":
        assert our_tokens == their_tokens
    # Steps up to the first different token saw the same inputs; an int4 run may part from onnxruntime's only
    # where onnxruntime's top two logits are within the tolerance of each other.
    same = next((i for i, (a, b) in enumerate(zip(our_tokens, their_tokens)) if a != b), len(our_tokens) - 1)
    worst = np.abs(ours[:same + 1] - theirs[:same + 1]).max() / scale
    assert worst <= tolerance, f"{name} {precision}: logits differ by {worst:.2e} of the largest"
    if our_tokens[same] != their_tokens[same]:
        top2 = np.sort(theirs[same])[-2:]
        assert top2[1] - top2[0] <= 2 * tolerance * scale, f"{name} {precision}: token differs at step {same}"


@pytest.mark.parametrize("precision", ["fp32", "int4"])
@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_builder_folder_generates_as_onnxruntime_genai(built, name, precision, tmp_path):
    """nxrt.genai and onnxruntime_genai on the builder's folder: greedy generation of 24 tokens after a 7-token
    prompt. fp32: the same tokens. int4: the same tokens up to the first step where nxrt's top two logits are
    within 1e-2 of the largest logit of each other (int8 rounding of A may flip such a near tie)."""
    import shutil

    import onnxruntime_genai as og

    import nxrt.genai as genai

    folder = tmp_path / "model"
    shutil.copytree(built(name, precision), folder)
    config = json.loads((folder / "genai_config.json").read_text())
    vocab = config["model"]["vocab_size"]
    eos = config["model"]["eos_token_id"]
    eos = [e for e in (eos if isinstance(eos, list) else [eos]) if e < vocab] or [2]
    config["model"]["eos_token_id"] = eos  # the shared GPT-2 tokenizer's 50256 is outside these small vocabularies
    for key in ("bos_token_id", "pad_token_id"):
        if config["model"].get(key, 0) >= vocab:
            config["model"][key] = eos[0]
    (folder / "genai_config.json").write_text(json.dumps(config))
    prompt = [5, 77, 300, 12, 499, 1, 42]
    length = len(prompt) + 24

    model = og.Model(str(folder))
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=length, do_sample=False)
    generator = og.Generator(model, params)
    generator.append_tokens(np.array([prompt], np.int32))
    while not generator.is_done():
        generator.generate_next_token()
    theirs = [int(t) for t in generator.get_sequence(0)]

    ours_model = genai.Model(folder)
    ours_params = genai.GeneratorParams(ours_model)
    ours_params.set_search_options(max_length=length, do_sample=False)
    ours_generator = genai.Generator(ours_model, ours_params)
    ours_generator.append_tokens(prompt)
    ours, gaps = list(prompt), []
    while not ours_generator.is_done():
        ours_generator.generate_next_token()
        logits = np.sort(ours_generator.get_logits()[0, 0].astype(np.float64))
        gaps.append((logits[-1] - logits[-2]) / np.abs(logits).max())
        ours.append(int(ours_generator.get_next_tokens()[0]))
    if precision == "fp32":
        assert ours == theirs
    else:
        first = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), None)
        if first is not None:
            assert gaps[first - len(prompt)] <= 1e-2, f"{name}: token {first} differs with a top-2 gap of " \
                                                      f"{gaps[first - len(prompt)]:.2e}"


@pytest.mark.parametrize("name", ["llama", "qwen3"])
def test_serve_batches_builder_decoder_as_genai_alone(built, name, tmp_path):
    """`nxrt serve` on a builder folder (GroupQueryAttention: each batch row's cache starts at position 0): four
    concurrent greedy completions of different prompt lengths and budgets, sharing decoder steps as the short ones
    leave, give the tokens nxrt.genai's Generator gives each prompt alone."""
    import concurrent.futures
    import shutil

    import nxrt.genai as genai
    from serve_support import greedy_alone, raw_request, running_server

    folder = tmp_path / "model"
    shutil.copytree(built(name, "fp32"), folder)
    config = json.loads((folder / "genai_config.json").read_text())
    vocab = config["model"]["vocab_size"]
    config["model"]["eos_token_id"] = [2]  # the shared GPT-2 tokenizer's 50256 is outside these small vocabularies
    for key in ("bos_token_id", "pad_token_id"):
        if config["model"].get(key, 0) >= vocab:
            config["model"][key] = 2
    (folder / "genai_config.json").write_text(json.dumps(config))
    prompts = [[5, 77, 300, 12, 499, 1, 42], [9, 8], [100, 200, 300, 400, 401, 402, 403, 404, 405, 406, 407], [33]]
    budgets = [12, 70, 7, 15]

    with running_server(folder, "--model-name", "m", "--max-batch", "4") as url:
        def ask(i):
            body = json.dumps({"model": "m", "prompt": prompts[i], "max_tokens": budgets[i], "temperature": 0,
                               "logprobs": 0})
            status, text, _ = raw_request(url, "POST", "/v1/completions", body, timeout=120)
            assert status == 200, text
            return json.loads(text)["choices"][0]

        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            choices = list(pool.map(ask, range(4)))
        # The four prompts in one request join together: prefilled in one decoder run, right-padded.
        def prefill_runs():
            _, metrics, _ = raw_request(url, "GET", "/metrics")
            return float(next(line.split()[1] for line in metrics.splitlines()
                              if line.startswith("nxrt_prefill_runs_total ")))

        runs_before = prefill_runs()
        body = json.dumps({"model": "m", "prompt": prompts, "max_tokens": 9, "temperature": 0})
        status, text, _ = raw_request(url, "POST", "/v1/completions", body, timeout=120)
        assert status == 200, text
        together = sorted(json.loads(text)["choices"], key=lambda c: c["index"])
        assert prefill_runs() == runs_before + 1
    tokenizer = genai.Tokenizer(genai.Model(folder))

    def expected_text(i, count):
        expected = greedy_alone(folder, prompts[i], count)
        if 2 in expected:
            expected = expected[: expected.index(2)]
        return tokenizer.decode(np.array(expected, np.int32))

    for i, choice in enumerate(choices):
        assert choice["text"] == expected_text(i, budgets[i]), f"{name}: prompt {i}"
    for i, choice in enumerate(together):
        assert choice["text"] == expected_text(i, 9), f"{name}: prompt {i} of one request"


def test_serve_reuses_the_kept_prefix_of_the_last_sequence(built, tmp_path):
    """The next turn of a conversation reuses the kept cache of the sequence that just left (shared buffers of
    GroupQueryAttention): serve_support.check_next_turn_reuses_the_prefix."""
    import shutil

    from serve_support import check_next_turn_reuses_the_prefix

    folder = tmp_path / "model"
    shutil.copytree(built("llama", "fp32"), folder)
    config = json.loads((folder / "genai_config.json").read_text())
    config["model"]["eos_token_id"] = [2]
    for key in ("bos_token_id", "pad_token_id"):
        if config["model"].get(key, 0) >= config["model"]["vocab_size"]:
            config["model"][key] = 2
    (folder / "genai_config.json").write_text(json.dumps(config))
    check_next_turn_reuses_the_prefix(folder, end_id=2)
