"""nxrt.genai's C++ Unigram tokenizer against the tokenizers package (PyPI): tokenizer.json files with a Unigram
model trained here with tokenizers' UnigramTrainer, in the forms converted SentencePiece unigram models take
(Metaspace alone, or WhitespaceSplit then Metaspace behind an NFKC normalizer; <unk> for unknown characters, or
byte fallback), must give the same ids on 2,000+ strings, the same decoded text, and clear errors for malformed
models. The four Unicode normalizers against Python's unicodedata on every assigned code point."""

import json
import unicodedata

import numpy as np
import pytest

from test_genai_tokenizer import NFC_CASES, assert_same_encodings_and_decodes, corpus

tokenizers = pytest.importorskip("tokenizers")
_nxrt = pytest.importorskip("nxrt._nxrt")

BYTE_TOKENS = [f"<0x{b:02X}>" for b in range(256)]
STYLES = ["metaspace", "whitespace_nfkc", "byte_fallback"]


def unigram_style(style, vocab_size=700):
    """A tokenizer.json with a Unigram model trained on a corpus of the shared fragments. "metaspace": Metaspace
    pre-tokenizer and decoder, <unk> for characters outside the vocabulary. "whitespace_nfkc": NFKC normalizer,
    WhitespaceSplit then Metaspace (the T5 / ALBERT conversion layout). "byte_fallback": the 256 <0xXX> pieces in
    the vocabulary with byte_fallback on, decoded by ByteFallback and Fuse after Metaspace's space mapping; <s> added
    by a template."""
    from tokenizers import decoders, models, normalizers, pre_tokenizers, trainers
    tokenizer = tokenizers.Tokenizer(models.Unigram())
    if style == "whitespace_nfkc":
        tokenizer.normalizer = normalizers.NFKC()
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(),
                                                           pre_tokenizers.Metaspace(replacement="\u2581")])
    else:
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581")
    tokenizer.decoder = decoders.Metaspace(replacement="\u2581")
    trainer = trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=["<unk>", "<s>", "</s>"],
                                      unk_token="<unk>", max_piece_length=8)
    # A corpus without the rarest scripts, so that some characters of the test strings are unknown.
    training = [s for s in corpus(count=800, seed=5) if not any(c in s for c in "한ש😀")]
    tokenizer.train_from_iterator(training, trainer)
    document = json.loads(tokenizer.to_str())
    if style == "byte_fallback":
        model = document["model"]
        lowest = min(score for _, score in model["vocab"])
        model["vocab"] += [[token, lowest - 1.0] for token in BYTE_TOKENS]
        model["byte_fallback"] = True
        document["decoder"] = {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
        document["post_processor"] = {
            "type": "TemplateProcessing", "pair": [],
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}}
    return json.dumps(document)


@pytest.fixture(scope="module", params=STYLES)
def styled(request):
    text = unigram_style(request.param)
    return request.param, _nxrt.GenaiTokenizer.from_json_text(text), tokenizers.Tokenizer.from_str(text)


def test_same_ids_and_decodes_on_the_corpus(styled):
    style, ours, theirs = styled
    strings = corpus(count=2000, seed=13) + NFC_CASES + ["<s>hello</s> world", "  two leading", "\u2581already",
                                                         "tab\there", "한국어 😀 שלום", "x" * 3000]
    assert len(strings) >= 2000
    all_ids = assert_same_encodings_and_decodes(ours, theirs, strings)
    # The corpus reaches the unknown piece except where byte fallback replaces it.
    assert any(0 in ids for ids in all_ids) == (style != "byte_fallback")


def test_byte_fallback_round_trips_every_string():
    text = unigram_style("byte_fallback")
    ours = _nxrt.GenaiTokenizer.from_json_text(text)
    for s in corpus(count=500, seed=31) + ["한국어 😀 שלום"]:
        ids = ours.encode(s, False)
        assert 0 not in ids, s
        # Metaspace turns a leading space into the prepended marker, which the decoder's Strip removes.
        assert ours.decode(ids) == (s[1:] if s.startswith(" ") else s), s


def test_decode_matches_tokenizers_on_arbitrary_ids(styled):
    _, ours, theirs = styled
    assert ours.vocab_size == theirs.get_vocab_size()
    rng = np.random.default_rng(17)
    for _ in range(300):
        ids = [int(i) for i in rng.integers(0, theirs.get_vocab_size(), size=int(rng.integers(0, 12)))]
        for skip in (True, False):
            assert ours.decode(ids, skip) == theirs.decode(ids, skip_special_tokens=skip), ids


def test_vocabulary_queries(styled):
    _, ours, theirs = styled
    for token in ["<unk>", "<s>", "\u2581the", "\u2581", "not-a-piece-at-all", "<0x41>"]:
        assert ours.token_to_id(token) == theirs.token_to_id(token), token
    for i in [0, 1, 2, 5, theirs.get_vocab_size() - 1]:
        assert ours.id_to_token(i) == theirs.id_to_token(i)


def hand_made(vocab, unk_id=0, byte_fallback=False):
    return json.dumps({"version": "1.0", "added_tokens": [], "normalizer": None, "pre_tokenizer": None,
                       "post_processor": None, "decoder": None,
                       "model": {"type": "Unigram", "unk_id": unk_id, "vocab": vocab, "byte_fallback": byte_fallback}})


def test_ties_unknown_runs_and_scores_follow_tokenizers():
    # Equal totals keep the candidate met first; unknown characters in a row fuse into one <unk>; the best path
    # may skip a piece that covers more of the word. Without an unknown piece, a character without a piece of its
    # own is an error unless a longer piece already reaches past it ("ax").
    vocab = [["<unk>", 0.0], ["a", -1.0], ["b", -1.0], ["ab", -2.0], ["abc", -2.5], ["c", -0.1], ["cd", -3.0],
             ["d", -1.0], ["é", -0.5], ["xé", -1.0], ["ax", -1.5]]
    strings = ["ab", "abc", "abcd", "cdab", "ééxé", "aab", "bca", "abcabcd", "zz", "azzb", "qzé", "zzzz", "xz", "ax",
               "axé", "bax", "xé"]
    outcomes = {}
    for unk_id in (0, None):
        text = hand_made(vocab, unk_id=unk_id)
        ours, theirs = _nxrt.GenaiTokenizer.from_json_text(text), tokenizers.Tokenizer.from_str(text)
        for s in strings:
            try:
                want = theirs.encode(s).ids
            except Exception:
                with pytest.raises(Exception, match="has no piece in the unigram vocabulary and there is no unk_id"):
                    ours.encode(s)
                outcomes[unk_id, s] = "error"
                continue
            assert ours.encode(s) == want, (unk_id, s)
            outcomes[unk_id, s] = "ids"
    assert outcomes[None, "ax"] == outcomes[None, "bax"] == "ids" and outcomes[None, "xz"] == "error"
    assert all(outcomes[0, s] == "ids" for s in strings)


def test_scores_are_read_as_tokenizers_reads_them():
    # tokenizers reads -7.8814749909977735 as -7.881474990997773 (an ulp away from the nearest double), which
    # decides the near tie between 4 + 8 and 8 + 4 characters after the prefix "we'vez" (found in a trained model).
    vocab = [["<unk>", 0.0], ["we've", -7.8814749909977735], ["z", -6.980807912974628],
             ["aaaa", -5.5602202409090555], ["aaaaaaaa", -5.6091232152379495], ["a", -9.0]]
    text = hand_made(vocab)
    ours, theirs = _nxrt.GenaiTokenizer.from_json_text(text), tokenizers.Tokenizer.from_str(text)
    assert theirs.encode("we'vez" + "a" * 12).ids == [1, 2, 3, 4]
    for s in ["we'vez" + "a" * 12, "a" * 12, "we've" + "a" * 24]:
        assert ours.encode(s) == theirs.encode(s).ids, s
    # Literal forms the reader must take: exponents, integers, many digits.
    vocab = [["<unk>", 0], ["x", -1e0], ["y", -25e-1], ["xy", -3.5000000000000000000000001], ["yx", -1.0E+1]]
    text = hand_made(vocab)
    ours, theirs = _nxrt.GenaiTokenizer.from_json_text(text), tokenizers.Tokenizer.from_str(text)
    for s in ["xy", "yx", "xyx", "yxy", "xxyy"]:
        assert ours.encode(s) == theirs.encode(s).ids, s


@pytest.mark.parametrize("model, message", [
    ({"type": "Unigram", "vocab": [["a", "x"]]}, "entries must be \\[piece, score\\] pairs"),
    ({"type": "Unigram", "vocab": {"a": 1.0}}, "model.vocab must be an array"),
    ({"type": "Unigram", "vocab": [["a", 0.0]], "unk_id": 3}, "unk_id 3 is outside the vocabulary of 1 pieces"),
    ({"type": "Unigram", "vocab": [["a", 0.0]], "unk_id": -1}, "unk_id must be an id"),
    ({"type": "WordPiece", "vocab": {}}, "model of type 'WordPiece' is not supported"),
])
def test_malformed_unigram_models_are_clear_errors(model, message):
    with pytest.raises(Exception, match=message):
        _nxrt.GenaiTokenizer.from_json_text(json.dumps({"model": model}))


@pytest.mark.parametrize("form", ["NFC", "NFD", "NFKC", "NFKD"])
def test_normalizers_match_unicodedata_on_every_assigned_code_point(form):
    # A Unigram model of the 256 byte pieces only, with byte fallback and the ByteFallback decoder, decodes to
    # exactly the normalized text; Python's unicodedata has the Unicode version the tables were generated from.
    if unicodedata.unidata_version != "14.0.0":
        pytest.skip(f"Python's unicodedata is Unicode {unicodedata.unidata_version}; the tables are 14.0.0")
    document = json.loads(hand_made([["<unk>", 0.0]] + [[t, -1.0] for t in BYTE_TOKENS], byte_fallback=True))
    document["normalizer"] = {"type": form}
    document["decoder"] = {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Fuse"}]}
    ours = _nxrt.GenaiTokenizer.from_json_text(json.dumps(document))
    assigned = [chr(cp) for cp in range(0x110000) if unicodedata.category(chr(cp)) not in ("Cn", "Cs")]
    # Runs of 48 code points (neighbours interact through ordering and composition), and runs mixing marks with
    # their bases.
    strings = ["".join(assigned[i:i + 48]) for i in range(0, len(assigned), 48)]
    strings += ["".join(case) for case in zip(NFC_CASES, reversed(NFC_CASES))]
    mismatches = [t for t in strings if ours.decode(ours.encode(t)) != unicodedata.normalize(form, t)]
    assert not mismatches, f"{len(mismatches)} of {len(strings)} differ, first: {mismatches[0]!r}"
