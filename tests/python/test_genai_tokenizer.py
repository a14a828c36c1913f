"""nxrt.genai's C++ tokenizer against the tokenizers package (PyPI) on the GPT-2 tokenizer.json of the shared
ONNX Runtime GenAI fixture: the same ids for a corpus of 2,400 strings (scripts, emoji, white-space runs that hit
the fixture's white-space added tokens, code, numbers, contractions, special-token text), decode(encode(s)) == s,
the same decoded text as tokenizers for arbitrary id sequences, and clear errors for malformed or unsupported
files."""

import json
from pathlib import Path

import numpy as np
import pytest

tokenizers = pytest.importorskip("tokenizers")
_nxrt = pytest.importorskip("nxrt._nxrt")

FIXTURE = Path(__file__).resolve().parents[3] / "shared" / "genai" / "tiny-random-gpt2-fp32" / "tokenizer.json"

FRAGMENTS = [
    "Hello", "world", "the", "The quick brown fox", "jumps over the lazy dog", "don't", "I'm", "we've", "they're",
    "you'll", "she'd", "it's", "O'Neil", "'s", "'S", "rock'n'roll", "x = f(y) + 3.14159;", "for i in range(10):",
    "    return a[i] ** 2", "#include <stdio.h>", "{\"key\": [1, 2, 3]}", "http://example.com/a?b=c&d=e",
    "12345", "3.0e-8", "1,000,000", "١٢٣", "Ⅻ", "½", "²", "Привет мир", "Γειά σου κόσμε", "日本語のテキスト",
    "中文分词测试", "한국어 문장", "مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया", "สวัสดีครับ", "Ελληνικά",
    "naïve café", "Zürich", "façade", "😀", "👍🏽", "👨‍👩‍👧‍👦", "🇯🇵", "🤖 robots", "✓ done", "→ ← ↑ ↓", "€100", "£5",
    "¥", "§1.2", "©", "—", "…", "«quoted»", "“smart quotes”", "<|endoftext|>", "<|endoftext|>text",
    "a<|endoftext|>b", "<|endoftext", "|endoftext|>", "\u00a0", "\u3000", "\u2028", "\u200b", "\ufeff",
    "\x0b", "\x0c", "\x85", "DON'T", "I'LL", "WE'VE", "It'S", "1234567890", "a1b22c333d4444", "\r\n\r\n",
    "a \n b", "\tfoo", "(foo)", "!!!\n\n", "x\n \ny", "end.\r\n", "-->\n\t<", "$$x", "\u00a0word",
]
WHITE_SPACE = [" ", "  ", "   ", "    ", "      ", "\t", "\t\t", "\t\t\t\t", "\n", "\n\n", "\r\n", " \n ", "\t \t",
               " " * 31, " " * 40, "\t" * 9, "\t" * 12]


def corpus(count=2400, seed=7):
    rng = np.random.default_rng(seed)
    strings = list(FRAGMENTS) + list(WHITE_SPACE)
    while len(strings) < count:
        parts = []
        for _ in range(int(rng.integers(1, 8))):
            source = FRAGMENTS if rng.random() < 0.65 else WHITE_SPACE
            parts.append(source[int(rng.integers(len(source)))])
        strings.append("".join(parts))
    strings.append("")
    strings.append("x" * 5000)  # one long word: merges stay fast
    strings.append(" ".join(FRAGMENTS) * 3)
    return strings


@pytest.fixture(scope="module")
def pair():
    if not FIXTURE.exists():
        pytest.skip(f"fixture {FIXTURE} is missing")
    return _nxrt.GenaiTokenizer.from_file(str(FIXTURE)), tokenizers.Tokenizer.from_file(str(FIXTURE))


def test_same_ids_and_round_trip_on_the_corpus(pair):
    ours, theirs = pair
    strings = corpus()
    assert len(strings) >= 2000
    mismatches = []
    for text in strings:
        got = ours.encode(text)
        want = theirs.encode(text).ids
        if got != want:
            mismatches.append((text, got, want))
        assert ours.decode(got) == text, repr(text)
    assert not mismatches, f"{len(mismatches)} of {len(strings)} differ, first: {mismatches[0]!r}"


LLAMA3 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
QWEN2 = LLAMA3.replace(r"\p{N}{1,3}", r"\p{N}")
GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"


@pytest.mark.parametrize("pattern", ["llama3", "qwen2", "gpt2"])
def test_split_pre_tokenizers_match_tokenizers(pair, pattern):
    # The fixture's vocabulary behind the Split + ByteLevel pre-tokenizers of the Llama 3 and Qwen2 families (and
    # GPT-2's pattern spelled as a Split), built with the tokenizers package.
    from tokenizers import Regex, pre_tokenizers
    theirs = tokenizers.Tokenizer.from_file(str(FIXTURE))
    regex = {"llama3": LLAMA3, "qwen2": QWEN2, "gpt2": GPT2}[pattern]
    theirs.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(regex), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    ours = _nxrt.GenaiTokenizer.from_json_text(theirs.to_str())
    mismatches = [text for text in corpus(count=2000, seed=11) if ours.encode(text) != theirs.encode(text).ids]
    assert not mismatches, f"{len(mismatches)} differ, first: {mismatches[0]!r}"


def sentencepiece_style(style, vocab_size=600):
    """A Llama / Mistral / Phi-3-style tokenizer.json trained here with the tokenizers package: BPE over characters
    with byte fallback (<0x00>..<0xFF> in the vocabulary), <unk> fused, <s> added by the template; `style` "legacy"
    writes spaces as U+2581 with normalizers (Prepend, Replace) and decodes with Replace, ByteFallback, Fuse, Strip,
    "metaspace" does it with the Metaspace pre-tokenizer and decoder (prepend_scheme first)."""
    from tokenizers import decoders, models, normalizers, pre_tokenizers, processors, trainers
    tokenizer = tokenizers.Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    if style == "legacy":
        tokenizer.normalizer = normalizers.Sequence([normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")])
        tokenizer.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(),
                                               decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    else:
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first", split=False)
        tokenizer.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="first", split=False)
    byte_tokens = [f"<0x{b:02X}>" for b in range(256)]
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<unk>", "<s>", "</s>"] + byte_tokens,
                                  limit_alphabet=60)
    tokenizer.train_from_iterator(corpus(count=600, seed=5), trainer)
    tokenizer.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    document = json.loads(tokenizer.to_str())
    # As in converted SentencePiece models the byte tokens are vocabulary entries, not added tokens.
    document["added_tokens"] = [t for t in document["added_tokens"] if t["content"] not in byte_tokens]
    return json.dumps(document)


def assert_same_encodings_and_decodes(ours, theirs, strings):
    """Each string encodes to the same ids with and without special tokens, and tokenizers' ids decode to the same
    text with and without skipping special tokens. Returns the ids of every string (special tokens added)."""
    mismatches, all_ids = [], []
    for s in strings:
        for special in (True, False):
            got, want = ours.encode(s, special), theirs.encode(s, add_special_tokens=special).ids
            if got != want:
                mismatches.append((s, special, got, want))
        ids = theirs.encode(s).ids
        all_ids.append(ids)
        for skip in (True, False):
            assert ours.decode(ids, skip) == theirs.decode(ids, skip_special_tokens=skip), (s, skip)
    assert not mismatches, f"{len(mismatches)} of {len(strings)} differ, first: {mismatches[0]!r}"
    return all_ids


@pytest.mark.parametrize("style", ["legacy", "metaspace"])
def test_sentencepiece_style_bpe_matches_tokenizers(style):
    text = sentencepiece_style(style)
    ours = _nxrt.GenaiTokenizer.from_json_text(text)
    theirs = tokenizers.Tokenizer.from_str(text)
    strings = corpus(count=2000, seed=13) + ["<s>hello</s> world", "  two leading", "\u2581already", "tab\there"]
    assert_same_encodings_and_decodes(ours, theirs, strings)
    rng = np.random.default_rng(9)
    for _ in range(300):  # arbitrary ids: byte tokens that do not form UTF-8, specials anywhere
        ids = [int(i) for i in rng.integers(0, theirs.get_vocab_size(), size=int(rng.integers(0, 12)))]
        assert ours.decode(ids, False) == theirs.decode(ids, skip_special_tokens=False), ids


NFC_CASES = ["e\u0301", "a\u0328\u0301", "a\u0301\u0328", "\u1100\u1161\u11a8", "\u1100\u1161", "\uac00\u11a8",
             "q\u0307\u0323", "\u0958", "\u212b", "\u1ec7", "\u00e9\u0301", "\u0b47\u0b3e", "\u0301start",
             "Ve\u0302\u0323t Nam", "\u0915\u093c", "\u2126", "\u1e9b\u0323", "\u0344", "\u0f73", "x\u0300\u0315\u0300"]


def test_nfc_normalizer_matches_python_and_tokenizers(pair):
    # A Qwen2-style file: NFC, the Qwen2 split and byte-level BPE over the fixture's vocabulary. decode(encode(s))
    # is then NFC(s), compared with Python's unicodedata; the ids with the tokenizers package.
    import unicodedata
    from tokenizers import Regex, normalizers, pre_tokenizers
    theirs = tokenizers.Tokenizer.from_file(str(FIXTURE))
    theirs.normalizer = normalizers.NFC()
    theirs.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    ours = _nxrt.GenaiTokenizer.from_json_text(theirs.to_str())
    rng = np.random.default_rng(21)
    strings = NFC_CASES + corpus(count=500, seed=17)
    strings += ["".join(NFC_CASES[int(i)] for i in rng.integers(len(NFC_CASES), size=4)) for _ in range(300)]
    for text in strings:
        ids = ours.encode(text)
        assert ours.decode(ids) == unicodedata.normalize("NFC", text), repr(text)
        assert ids == theirs.encode(text).ids, repr(text)


@pytest.mark.parametrize("family", ["gpt2", "legacy", "metaspace"])
def test_stream_pieces_add_up_to_the_decode(pair, family):
    ours = pair[0] if family == "gpt2" else _nxrt.GenaiTokenizer.from_json_text(sentencepiece_style(family))
    for text in corpus(count=400, seed=29) + NFC_CASES:
        ids = ours.encode(text)
        stream = _nxrt.GenaiTokenizerStream(ours)
        pieces = [stream.decode(i) for i in ids]
        assert "".join(pieces) == ours.decode(ids, True), repr(text)
        assert all("\ufffd" not in piece for piece in pieces) or "\ufffd" in text, repr(text)


def test_decode_matches_tokenizers_on_arbitrary_ids(pair):
    ours, theirs = pair
    rng = np.random.default_rng(3)
    for _ in range(300):
        ids = [int(i) for i in rng.integers(0, ours.vocab_size, size=int(rng.integers(0, 20)))]
        for skip in (False, True):
            assert ours.decode(ids, skip) == theirs.decode(ids, skip_special_tokens=skip), ids


def test_vocabulary_queries(pair):
    ours, theirs = pair
    assert ours.vocab_size == theirs.get_vocab_size()
    for token in ["hello", "Ġworld", "<|endoftext|>", " " * 10, "not-a-token-at-all"]:
        assert ours.token_to_id(token) == theirs.token_to_id(token)
    for i in [0, 1, 255, 256, 50255, 50256, 50294]:
        assert ours.id_to_token(i) == theirs.id_to_token(i)
    assert ours.id_to_token(10 ** 6) is None


def test_out_of_range_ids_are_errors(pair):
    ours, _ = pair
    with pytest.raises(Exception, match="id 99999999 is not a token"):
        ours.decode([5, 99999999])
    with pytest.raises(Exception, match="id -1 is not a token"):
        ours.decode([-1])


def tiny(**overrides):
    """A small byte-level BPE tokenizer.json (the 256 byte symbols, one merge) with members replaced."""
    table = [chr(b) if 0x21 <= b <= 0x7E or 0xA1 <= b <= 0xAC or 0xAE <= b <= 0xFF else None for b in range(256)]
    extra = iter(range(0x100, 0x200))
    vocab = {(c if c is not None else chr(next(extra))): i for i, c in enumerate(table)}
    vocab["ab"] = 256
    document = {"version": "1.0", "added_tokens": [], "normalizer": None,
                "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                                  "use_regex": True},
                "post_processor": None,
                "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
                "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                          "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "vocab": vocab,
                          "merges": ["a b"]}}
    document.update(overrides)
    return json.dumps(document)


def test_a_small_file_matches_tokenizers_with_a_template_and_added_tokens():
    flags = {"single_word": False, "lstrip": False, "rstrip": False}
    added = [dict(flags, id=257, content="<s>", special=True, normalized=False),
             dict(flags, id=258, content="[X]", special=False, normalized=True, lstrip=True, rstrip=True),
             dict(flags, id=259, content="zz", special=False, normalized=True, single_word=True)]
    post = {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                                     {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [257], "tokens": ["<s>"]}}}
    text = tiny(added_tokens=added, post_processor=post)
    ours = _nxrt.GenaiTokenizer.from_json_text(text)
    theirs = tokenizers.Tokenizer.from_str(text)
    for s in ["ab ab", "xab  [X]  yab", "<s>ab", "[X][X]", "", "zz,zz_zz 1zz zz!", "é zz\u00a0zzz", "azz zz"]:
        for special in (True, False):
            assert ours.encode(s, special) == theirs.encode(s, add_special_tokens=special).ids, (s, special)


@pytest.mark.parametrize("text, message", [
    ("{", "invalid JSON at line 1, column 2"),
    ('{"model": [1, 2,]}', "invalid JSON at line 1"),
    ('{"a": "\\ud800"}', "surrogate"),
    ("[" * 300 + "]" * 300, "nesting deeper than 256"),
    ('{"model": {"type": "WordLevel", "vocab": {}}}', "model of type 'WordLevel' is not supported"),
])
def test_malformed_or_unsupported_files_are_clear_errors(text, message):
    with pytest.raises(Exception, match=message):
        _nxrt.GenaiTokenizer.from_json_text(text)


def test_unsupported_parts_are_named():
    with pytest.raises(Exception, match="normalizer of type 'Lowercase' is not supported"):
        _nxrt.GenaiTokenizer.from_json_text(tiny(normalizer={"type": "Lowercase"}))
    with pytest.raises(Exception, match="merge 0 .* uses a token outside the vocabulary"):
        document = json.loads(tiny())
        document["model"]["merges"] = ["q zz"]
        _nxrt.GenaiTokenizer.from_json_text(json.dumps(document))
    with pytest.raises(Exception, match="NO_SUCHFILE|cannot open"):
        _nxrt.GenaiTokenizer.from_file("/nonexistent/tokenizer.json")
