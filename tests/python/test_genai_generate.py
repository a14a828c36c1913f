"""nxrt.genai against onnxruntime_genai (PyPI) on ONNX Runtime GenAI's own GPT-2 test folder
(../shared/genai/tiny-random-gpt2-fp32: combined past_%d cache, int32 inputs, vocab 1000): the same greedy tokens
for 64 new tokens at batch 1 and batch 3 (equal and left-padded prompt lengths), sampling that stays inside top_k /
top_p and repeats under a seed, the streaming text, and clear errors for bad folders and bad requests."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import nxrt
import nxrt.genai as genai

og = pytest.importorskip("onnxruntime_genai", reason="onnxruntime-genai is not installed (requirements/heavy.txt)")

FOLDER = Path(__file__).resolve().parents[3] / "shared" / "genai" / "tiny-random-gpt2-fp32"
PAD = 98  # the fixture's pad, bos and eos id
PROMPTS = [[5, 17, 300, 42, 7], [900, 1, 2, 3, 4], [63, 63, 63, 500, 12], [11, 600, 601, 700, 99]]

pytestmark = pytest.mark.skipif(not FOLDER.exists(), reason=f"the shared genai fixture is not at {FOLDER}")


def og_sequences(prompts, max_length):
    """onnxruntime_genai's greedy sequences; prompts of different lengths are left-padded with the pad id."""
    model = og.Model(str(FOLDER))
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=max_length, do_sample=False, batch_size=len(prompts))
    generator = og.Generator(model, params)
    width = max(len(p) for p in prompts)
    generator.append_tokens(np.array([[PAD] * (width - len(p)) + p for p in prompts], np.int32))
    while not generator.is_done():
        generator.generate_next_token()
    return [list(generator.get_sequence(i))[width - len(p):] for i, p in enumerate(prompts)]


def our_sequences(prompts, max_length, **options):
    model = genai.Model(FOLDER)
    params = genai.GeneratorParams(model)
    params.set_search_options(max_length=max_length, do_sample=False, **options)
    generator = genai.Generator(model, params)
    generator.append_tokens(prompts)
    while not generator.is_done():
        generator.generate_next_token()
    return [list(generator.get_sequence(i)) for i in range(len(prompts))]


@pytest.mark.parametrize("prompt", PROMPTS)
def test_greedy_tokens_match_onnxruntime_genai(prompt):
    assert our_sequences([prompt], len(prompt) + 64) == og_sequences([prompt], len(prompt) + 64)


def test_batch_of_three_matches_onnxruntime_genai():
    prompts = PROMPTS[:3]
    assert our_sequences(prompts, 5 + 64) == og_sequences(prompts, 5 + 64)


def test_left_padded_batch_rows_match_onnxruntime_genai_alone():
    # Padding positions are masked out, so each row of a left-padded batch continues its prompt exactly as it does
    # alone. (onnxruntime_genai attends to this fixture's pad id, which is also its bos / eos id, so its own padded
    # rows differ from its unpadded runs; each row is compared with onnxruntime_genai's run of that prompt alone.)
    prompts = [[5, 17, 300, 42, 7], [900, 1], [63, 500, 12]]
    width = max(len(p) for p in prompts)
    ours = our_sequences(prompts, width + 40)
    for i, prompt in enumerate(prompts):
        assert ours[i] == og_sequences([prompt], width + 40 - (width - len(prompt)))[0], f"sequence {i}"


def test_each_padded_row_matches_its_own_run():
    prompts = [[5, 17, 300, 42, 7], [900, 1], [63, 500, 12]]
    batched = our_sequences(prompts, 5 + 30)
    for prompt, row in zip(prompts, batched):
        alone = our_sequences([prompt], len(row))[0]
        assert row == alone


def test_sampling_stays_in_top_k_and_repeats_under_a_seed():
    model = genai.Model(FOLDER)

    def run(seed, **options):
        params = genai.GeneratorParams(model)
        params.set_search_options(max_length=40, do_sample=True, random_seed=seed, **options)
        generator = genai.Generator(model, params)
        generator.append_tokens(PROMPTS[0])
        picks = []
        while not generator.is_done():
            generator.generate_next_token()
            logits = generator.get_logits()[0, 0]
            picks.append((int(generator.get_next_tokens()[0]), logits))
        return picks

    first = run(7, top_k=5, temperature=0.8)
    again = run(7, top_k=5, temperature=0.8)
    assert [t for t, _ in first] == [t for t, _ in again]
    for token, logits in first:
        assert token in np.argsort(logits)[-5:]
    for token, logits in run(3, top_k=0, top_p=1e-6):  # top_p that small keeps the top token only: greedy
        assert token == int(np.argmax(logits))
    greedy = our_sequences([PROMPTS[0]], 40)[0]
    sampled_top1 = [t for t, _ in run(11, top_k=1)]
    assert sampled_top1 == greedy[len(PROMPTS[0]):]


def test_stream_and_generate_give_the_decoded_text():
    model = genai.Model(FOLDER)
    tokenizer = genai.Tokenizer(model)
    ids = tokenizer.encode(", the and of.")  # GPT-2 ids below the model's 1000
    params = genai.GeneratorParams(model)
    params.set_search_options(max_length=len(ids) + 20)
    generator = genai.Generator(model, params)
    generator.append_tokens(ids)
    stream = tokenizer.create_stream()
    pieces = []
    while not generator.is_done():
        generator.generate_next_token()
        pieces.append(stream.decode(generator.get_next_tokens()[0]))
    # The pieces hold back bytes that do not complete a character (random tokens may end on such bytes).
    sequence = generator.get_sequence(0)
    decoded = tokenizer.decode(sequence[len(ids):])
    assert decoded.startswith("".join(pieces))
    assert set(decoded[len("".join(pieces)):]) <= {"\ufffd"}
    assert "".join(genai.generate(FOLDER, ", the and of.", max_new_tokens=20)) == "".join(pieces)


def copy_fixture(tmp_path, edit=None):
    folder = tmp_path / "model"
    shutil.copytree(FOLDER, folder)
    if edit is not None:
        config = json.loads((folder / "genai_config.json").read_text())
        edit(config)
        (folder / "genai_config.json").write_text(json.dumps(config))
    return folder


def test_bad_requests_are_clear_errors(tmp_path):
    model = genai.Model(FOLDER)
    params = genai.GeneratorParams(model)
    params.set_search_options(max_length=6)
    generator = genai.Generator(model, params)
    with pytest.raises(nxrt.capi.onnxruntime_pybind11_state.InvalidArgument, match="more than max_length 6"):
        generator.append_tokens(list(range(1, 9)))
    with pytest.raises(nxrt.capi.onnxruntime_pybind11_state.InvalidArgument, match="outside the vocabulary"):
        genai.Generator(model, params).append_tokens([5, 1000])
    params.set_search_options(max_length=10_000)
    with pytest.raises(nxrt.capi.onnxruntime_pybind11_state.InvalidArgument, match="context_length 512"):
        genai.Generator(model, params)
    params.set_search_options(max_length=20, bogus=1)
    with pytest.raises(nxrt.capi.onnxruntime_pybind11_state.InvalidArgument, match="unknown search option 'bogus'"):
        genai.Generator(model, params)
    with pytest.raises(nxrt.capi.onnxruntime_pybind11_state.NoSuchFile, match="genai_config.json"):
        genai.Model(tmp_path / "nothing")
    renamed = copy_fixture(tmp_path, lambda c: c["model"]["decoder"]["inputs"].update(past_names="cache_%d"))
    with pytest.raises(nxrt.capi.onnxruntime_pybind11_state.InvalidArgument, match="no input 'cache_0'"):
        genai.Model(renamed)


def test_chat_template_of_the_folder(tmp_path, nxrt_cli):
    # A chat template added to the fixture's tokenizer_config.json formats the turns; the CLI's --chat uses it.
    import subprocess
    folder = copy_fixture(tmp_path)
    config = json.loads((folder / "tokenizer_config.json").read_text())
    config["chat_template"] = ("{% for m in messages %}{% if m.role == 'system' %}{{ m.content }}{% else %}"
                               "{{ m.content | trim }}{% endif %}{% endfor %}{% if add_generation_prompt %}.{% endif %}")
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    tokenizer = genai.Tokenizer(genai.Model(folder))
    messages = [{"role": "system", "content": " and"}, {"role": "user", "content": "  , the  "}]
    assert tokenizer.apply_chat_template(json.dumps(messages), add_generation_prompt=True) == " and, the."
    assert tokenizer.apply_chat_template(messages, add_generation_prompt=False) == " and, the"
    assert tokenizer.apply_chat_template(messages, template_str="{{ messages | length }}") == "2"
    done = subprocess.run([str(nxrt_cli), "generate", str(folder), "--chat", "--system", " and", "--prompt", ", the",
                           "--max-new-tokens", "8"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    expected = "".join(genai.generate(folder, " and, the.", max_new_tokens=8))
    assert done.stdout == expected + "\n"


def test_rewind_continues_as_a_fresh_run_and_appends_as_onnxruntime_genai():
    model = genai.Model(FOLDER)
    params = genai.GeneratorParams(model)
    params.set_search_options(max_length=30, do_sample=False)
    prompt = PROMPTS[0]
    generator = genai.Generator(model, params)
    generator.append_tokens(prompt)
    for _ in range(10):
        generator.generate_next_token()
    full = list(generator.get_sequence(0))
    for length in (len(prompt) + 3, len(prompt)):
        generator.rewind_to(length)
        assert list(generator.get_sequence(0)) == full[:length]
        for _ in range(len(full) - length):
            generator.generate_next_token()
        assert list(generator.get_sequence(0)) == full  # greedy from a prefix of the sequence retraces it
    generator.rewind_to(1)  # down to one token: as a fresh run of that token
    for _ in range(6):
        generator.generate_next_token()
    assert list(generator.get_sequence(0)) == our_sequences([prompt[:1]], 7)[0]
    # Rewind, then a new turn: the same as onnxruntime_genai.
    generator = genai.Generator(model, params)
    generator.append_tokens(prompt)
    for _ in range(3):
        generator.generate_next_token()
    generator.rewind_to(6)
    generator.append_tokens([900, 1])
    generator.generate_next_token()
    theirs_model = og.Model(str(FOLDER))
    theirs_params = og.GeneratorParams(theirs_model)
    theirs_params.set_search_options(max_length=30, do_sample=False)
    theirs = og.Generator(theirs_model, theirs_params)
    theirs.append_tokens(np.array([prompt], np.int32))
    for _ in range(3):
        theirs.generate_next_token()
    theirs.rewind_to(6)
    theirs.append_tokens(np.array([[900, 1]], np.int32))
    theirs.generate_next_token()
    assert list(generator.get_sequence(0)) == [int(t) for t in theirs.get_sequence(0)]
    with pytest.raises(nxrt.capi.onnxruntime_pybind11_state.InvalidArgument, match="rewind_to\\(0\\) must lie"):
        generator.rewind_to(0)


@pytest.mark.parametrize("option", ["presence_penalty", "frequency_penalty", "repetition_penalty"])
def test_penalties_stop_repeats(option):
    # The fixture's greedy continuation repeats one token; a large penalty makes every generated token new.
    prompt = PROMPTS[0]
    plain = our_sequences([prompt], len(prompt) + 24)[0][len(prompt):]
    assert len(set(plain)) < len(plain)
    value = 1000.0 if option != "repetition_penalty" else 1e6
    penalized = our_sequences([prompt], len(prompt) + 24, **{option: value})[0][len(prompt):]
    assert len(set(penalized)) == len(penalized), penalized


BEAM_OPTIONS = [dict(num_beams=3, num_return_sequences=2, early_stopping=True, length_penalty=1.0),
                dict(num_beams=4, num_return_sequences=4, early_stopping=False, length_penalty=0.5),
                dict(num_beams=2, num_return_sequences=1, early_stopping=True, length_penalty=2.0,
                     repetition_penalty=1.3)]


def beam_sequences(runtime, folder, prompts, options):
    model = runtime.Model(str(folder))
    params = runtime.GeneratorParams(model)
    params.set_search_options(max_length=24, do_sample=False, batch_size=len(prompts), **options)
    generator = runtime.Generator(model, params)
    generator.append_tokens(np.array(prompts, np.int32))
    while not generator.is_done():
        generator.generate_next_token()
    count = len(prompts) * options["num_return_sequences"]
    return [[int(t) for t in generator.get_sequence(i)] for i in range(count)]


@pytest.mark.parametrize("eos", [None, 204])
@pytest.mark.parametrize("options", range(len(BEAM_OPTIONS)))
def test_beam_search_matches_onnxruntime_genai(tmp_path, eos, options):
    # eos 204, a token this model emits often, closes hypotheses early; the fixture's own eos never comes.
    folder = copy_fixture(tmp_path, None if eos is None else lambda c: c["model"].update(eos_token_id=eos))
    for prompts in ([PROMPTS[0]], [PROMPTS[2]], [PROMPTS[1], PROMPTS[3]]):
        ours = beam_sequences(genai, folder, prompts, BEAM_OPTIONS[options])
        theirs = beam_sequences(og, folder, prompts, BEAM_OPTIONS[options])
        assert ours == theirs, prompts


@pytest.mark.parametrize("options, message", [
    (dict(do_sample=True, temperature=0.0), "positive temperature"),
    (dict(top_p=0.0), "top_p must lie in \\(0, 1\\]"),
    (dict(top_p=1.5), "top_p must lie in \\(0, 1\\]"),
    (dict(min_p=2.0), "min_p in \\[0, 1\\]"),
    (dict(top_k=-1), "top_k be nonnegative"),
    (dict(repetition_penalty=0.0), "repetition_penalty positive"),
    (dict(num_beams=2, num_return_sequences=3), "num_return_sequences 3 must be at most num_beams 2"),
    (dict(num_beams=2, do_sample=True), "beam search with sampling"),
    (dict(max_length=0), "max_length 0 must lie in \\[1, context_length 512\\]"),
])
def test_invalid_search_options_are_named(options, message):
    model = genai.Model(FOLDER)
    params = genai.GeneratorParams(model)
    params.set_search_options(**options)
    with pytest.raises(Exception, match=message):
        genai.Generator(model, params)


def test_interactive_chat_reuses_the_conversation_cache(tmp_path, nxrt_cli):
    # Each stdin line is a user turn; the template renders user turns only, so turn 2's prompt extends turn 1's and
    # the generator keeps the common prefix. Each reply equals a fresh greedy run on the whole formatted prompt.
    import subprocess
    folder = copy_fixture(tmp_path)
    config = json.loads((folder / "tokenizer_config.json").read_text())
    config["chat_template"] = "{% for m in messages if m.role == 'user' %}{{ m.content | trim }}.{% endfor %}"
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    done = subprocess.run([str(nxrt_cli), "generate", str(folder), "--interactive", "--max-new-tokens", "6"],
                          input=", the\n\n and\n", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    replies = done.stdout.split("\n")[:2]
    assert replies[0] == "".join(genai.generate(folder, ", the.", max_new_tokens=6))
    assert replies[1] == "".join(genai.generate(folder, ", the. and.", max_new_tokens=6))
