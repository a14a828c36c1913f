"""nxrt.genai: text generation over ONNX Runtime GenAI model folders, with the surface of ``onnxruntime_genai`` for
what the two share, so that ``import nxrt.genai as og`` runs scripts written for it:

    model = og.Model(folder)
    tokenizer = og.Tokenizer(model)
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=64, do_sample=False)
    generator = og.Generator(model, params)
    generator.append_tokens(tokenizer.encode("Hello"))
    stream = tokenizer.create_stream()
    while not generator.is_done():
        generator.generate_next_token()
        print(stream.decode(generator.get_next_tokens()[0]), end="")

plus ``generate(folder, prompt, max_new_tokens=...)``, an iterator of text pieces. Errors are the exceptions of
``nxrt`` (``nxrt.capi.onnxruntime_pybind11_state``) with messages naming the file, key or value at fault.
"""

import json
from pathlib import Path

import numpy as np

from nxrt import _nxrt

__all__ = ["Generator", "GeneratorParams", "Model", "Tokenizer", "TokenizerStream", "generate"]


class Model:
    """A model folder: genai_config.json, the decoder named there, and tokenizer.json when present."""

    def __init__(self, folder, threads=0):
        self._model = _nxrt.GenaiModel.load(str(folder), int(threads))
        self.folder = str(folder)

    @property
    def type(self):
        return self._model.type

    @property
    def device_type(self):
        return "cpu"


class Tokenizer:
    """The folder's tokenizer.json: ids as the tokenizers package gives them."""

    def __init__(self, model):
        folder = model.folder if isinstance(model, Model) else str(model)
        self._folder = folder
        self._tokenizer = _nxrt.GenaiTokenizer.from_file(folder + "/tokenizer.json")

    def apply_chat_template(self, messages, template_str=None, tools=None, add_generation_prompt=True):
        """The prompt text of `messages` (a JSON string or a list of dicts) by the folder's chat template, or by
        `template_str`."""
        if not isinstance(messages, str):
            messages = json.dumps(messages)
        if tools is not None and not isinstance(tools, str):
            tools = json.dumps(tools)
        if template_str:
            config = Path(self._folder, "tokenizer_config.json")
            formatter = _nxrt.GenaiChatFormatter.from_source(template_str,
                                                             config.read_text() if config.exists() else "")
        else:
            formatter = _nxrt.GenaiChatFormatter.from_folder(self._folder)
        return formatter.apply(messages, bool(add_generation_prompt), tools or "")

    def encode(self, text, add_special_tokens=True):
        return np.asarray(self._tokenizer.encode(text, add_special_tokens), dtype=np.int32)

    def encode_batch(self, texts, add_special_tokens=True):
        """Token ids of several texts, [len(texts), longest] with shorter rows left-padded with -1 (pass each
        row's ids without the -1 to Generator.append_tokens as a list of sequences)."""
        rows = [self._tokenizer.encode(t, add_special_tokens) for t in texts]
        width = max((len(r) for r in rows), default=0)
        out = np.full((len(rows), width), -1, np.int32)
        for i, r in enumerate(rows):
            out[i, width - len(r):] = r
        return out

    def decode(self, tokens, skip_special_tokens=True):
        return self._tokenizer.decode([int(t) for t in np.asarray(tokens).ravel()], skip_special_tokens)

    def decode_batch(self, rows, skip_special_tokens=True):
        return [self.decode([t for t in row if t >= 0], skip_special_tokens) for row in np.asarray(rows)]

    def create_stream(self, skip_special_tokens=True):
        return TokenizerStream(self, skip_special_tokens)

    def to_token_id(self, token):
        return self._tokenizer.token_to_id(token)

    def token_to_id(self, token):
        return self._tokenizer.token_to_id(token)

    def id_to_token(self, token_id):
        return self._tokenizer.id_to_token(int(token_id))


class TokenizerStream:
    """Decodes generated tokens one at a time; a piece never ends inside a UTF-8 character."""

    def __init__(self, tokenizer, skip_special_tokens=True):
        self._stream = _nxrt.GenaiTokenizerStream(tokenizer._tokenizer, skip_special_tokens)
        self._tokenizer = tokenizer  # the C++ stream reads the tokenizer

    def decode(self, token):
        return self._stream.decode(int(token))


class GeneratorParams:
    """Search options on top of the folder's "search" defaults."""

    def __init__(self, model):
        self._model = model
        self.search_options = {}

    def set_search_options(self, **options):
        for key, value in options.items():
            if key == "batch_size":  # onnxruntime_genai's sizing hint; the prompts give the batch here
                continue
            self.search_options[key] = value


class Generator:
    def __init__(self, model, params):
        self._generator = _nxrt.GenaiGenerator(model._model, dict(params.search_options))

    def append_tokens(self, tokens):
        """Prompt tokens: one sequence (1-D), a batch ([B, N] array, -1 entries being left padding), or a list of
        sequences of any lengths."""
        if isinstance(tokens, (list, tuple)) and tokens and isinstance(tokens[0], (list, tuple, np.ndarray)):
            rows = [[int(t) for t in row if t >= 0] for row in tokens]
        else:
            array = np.asarray(tokens)
            if array.ndim == 1:
                array = array[None, :]
            rows = [[int(t) for t in row if t >= 0] for row in array]
        self._generator.append_tokens(rows)

    def generate_next_token(self):
        self._generator.generate_next_token()

    def is_done(self):
        return self._generator.is_done()

    def rewind_to(self, length):
        """Cuts the sequence back to its first `length` tokens; generation goes on from there."""
        self._generator.rewind_to(int(length))

    def get_next_tokens(self):
        return np.asarray(self._generator.get_next_tokens(), dtype=np.int32)

    def get_sequence(self, index):
        return np.asarray(self._generator.get_sequence(int(index)), dtype=np.int32)

    def get_logits(self):
        """The last logits, [batch, 1, vocab] float32."""
        logits = np.asarray(self._generator.get_logits(), dtype=np.float32)
        return logits.reshape(-1, 1, self._generator_vocab()) if logits.size else logits

    def _generator_vocab(self):
        return max(1, len(self._generator.get_logits()) // max(1, len(self._generator.get_next_tokens())))


def generate(folder, prompt, max_new_tokens=128, **search_options):
    """Yields the text of `prompt` continued by up to max_new_tokens tokens, piece by piece (greedy unless
    do_sample=True is given)."""
    model = folder if isinstance(folder, Model) else Model(folder)
    tokenizer = Tokenizer(model)
    ids = tokenizer.encode(prompt)
    params = GeneratorParams(model)
    max_length = min(len(ids) + int(max_new_tokens), model._model.context_length)
    params.set_search_options(max_length=max_length, **search_options)
    generator = Generator(model, params)
    generator.append_tokens(ids)
    stream = tokenizer.create_stream()
    while not generator.is_done():
        generator.generate_next_token()
        piece = stream.decode(generator.get_next_tokens()[0])
        if piece:
            yield piece
