"""Writes fuzz/corpus/tokenizer: seed inputs of fuzz_tokenizer (a tokenizer.json, a NUL byte, a text; or a text
alone for the target's built-in tokenizer). The tokenizers are small ones trained here with the tokenizers
package in the families nxrt reads: byte-level BPE with the GPT-2 and Llama 3 splits, and SentencePiece-style BPE
with byte fallback (normalizer form and Metaspace form).

    .venv/bin/python fuzz/make_tokenizer_corpus.py
"""

import json
import pathlib
import shutil

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

HERE = pathlib.Path(__file__).resolve().parent
TEXTS = ["Hello world, it's 2026!", "  spaces\tand\ttabs\n\nnew lines\r\n", "naïve café 日本語 😀👍🏽 مرحبا",
         "<s>special</s> text <unk>", "x = f(y) + 3.14159; // code", "DON'T 'Re 12345678", "\u2581already marked"]
# Chat templates in the styles the renderer is tested on (tests/python/test_genai_chat_template.py).
TEMPLATES = [
    "{{ bos_token }}{% for m in messages %}{{ '<|' + m['role'] + '|>' + m['content'] | trim + '\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}",
    "{%- set ns = namespace(n=0) %}{%- for m in messages if m.role != 'system' %}{% set ns.n = ns.n + 1 %}"
    "[{{ loop.index0 }}:{{ m.role | upper }}] {{ m.content[:5] ~ (m.tool_calls | default([]) | length) }}"
    "{% else %}none{% endfor %}{{ tools | tojson(indent=2) if tools else '' }}{{ ns.n is even }}",
    "{% if messages[0]['role'] != 'system' %}{{ raise_exception('system first') }}{% endif %}"
    "{% for k, v in {'a': [1, 2.5, none], 'b': 'x'}.items() %}{{ k }}={{ v }};{% break %}{% endfor %}"
    "{{ 'a,b'.split(',') | join('+') }}{{ range(3) | list }}{{ 7 // 2 }}{{ -7 % 3 }}",
]
LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
          r"|\s+(?!\S)|\s+")


def train(tokenizer, vocab_size, specials):
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials, limit_alphabet=40,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
                                  if tokenizer.pre_tokenizer is not None and "ByteLevel" in tokenizer.to_str() else [])
    tokenizer.train_from_iterator(TEXTS * 20, trainer)
    return tokenizer


def byte_level(split):
    tokenizer = Tokenizer(models.BPE())
    if split == "gpt2":
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    else:
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(LLAMA3), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tokenizer.decoder = decoders.ByteLevel()
    return train(tokenizer, 300, ["<s>", "</s>"])


def sentencepiece(style):
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    if style == "legacy":
        tokenizer.normalizer = normalizers.Sequence([normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")])
        tokenizer.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(),
                                               decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    else:
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first", split=False)
        tokenizer.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="first", split=False)
    byte_tokens = [f"<0x{b:02X}>" for b in range(256)]
    train(tokenizer, 340, ["<unk>", "<s>", "</s>"] + byte_tokens)
    tokenizer.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    document = json.loads(tokenizer.to_str())
    document["added_tokens"] = [t for t in document["added_tokens"] if t["content"] not in byte_tokens]
    return document


def main():
    out = HERE / "corpus" / "tokenizer"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    files = {"gpt2": json.loads(byte_level("gpt2").to_str()), "llama3": json.loads(byte_level("llama3").to_str()),
             "sp_legacy": sentencepiece("legacy"), "sp_metaspace": sentencepiece("metaspace")}
    for name, document in files.items():
        text = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()
        for i, sample in enumerate(TEXTS[:3]):
            (out / f"{name}_{i}").write_bytes(text + b"\0" + sample.encode())
    for i, sample in enumerate(TEXTS):
        (out / f"builtin_{i}").write_bytes(sample.encode())
    for i, template in enumerate(TEMPLATES):
        (out / f"template_{i}").write_bytes(b"\x01" + template.encode())


if __name__ == "__main__":
    main()
