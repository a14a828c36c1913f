"""com.microsoft ops where generation speed is decided, for the CPU benchmark (``bench/suite/run.py --suite
contrib``): MatMulNBits at M = 1 (4096 x 4096 and 4096 x 11008, 4-bit, block 32, accuracy_level 4 as
onnxruntime_genai's builder writes it for the CPU; 8-bit 4096 x 4096 at accuracy_level 4 and 0), a GroupQueryAttention decode step over a 1024-token cache, and
one decode step of a ~125M-parameter Llama-shaped int4 decoder made by onnxruntime_genai.models.builder from a
random-weight checkpoint (transformers; built once into ``$NXRT_BENCH_CACHE``, default ``~/.cache/nxrt-bench``).

accuracy_level 4 lets both runtimes quantize A to int8 per block (the same rounding), so their outputs agree
closely; the tolerance still allows one int8 step of A where float differences cross a rounding boundary.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "suite"))
from models import Case  # noqa: E402

MS = "com.microsoft"
TOKENIZER = Path(__file__).resolve().parents[3] / "shared" / "genai" / "tiny-random-gpt2-fp32"


def opsets():
    return [helper.make_opsetid("", 21), helper.make_opsetid(MS, 1)]


def matmul_nbits(k, n, block=32, m=1, bits=4, accuracy_level=4):
    rng = np.random.default_rng(k + n)
    k_blocks = k // block
    weights = rng.integers(0, 256, size=(n, k_blocks, block * bits // 8), dtype=np.uint8)
    scales = rng.uniform(0.001, 0.01, size=(n, k_blocks)).astype(np.float32) / (1 << (bits - 4))
    node = helper.make_node("MatMulNBits", ["a", "b", "scales"], ["y"], domain=MS, K=k, N=n, bits=bits,
                            block_size=block, accuracy_level=accuracy_level)
    initializers = [onnx.numpy_helper.from_array(weights, "b"), onnx.numpy_helper.from_array(scales, "scales")]
    graph = helper.make_graph([node], "nbits", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [m, k])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])], initializers)
    model = helper.make_model(graph, opset_imports=opsets())
    feeds = {"a": rng.standard_normal((m, k)).astype(np.float32)}
    level = "" if accuracy_level == 4 else f" level {accuracy_level}"
    notes = "accuracy_level 4: A quantized to int8 per block" if accuracy_level == 4 else "float A"
    return Case(f"MatMulNBits M={m} {k}x{n} int{bits} b{block}{level}", model.SerializeToString(), feeds, rtol=5e-2,
                atol=5e-2, notes=notes)


def gqa_decode(past=1024, heads=32, kv_heads=8, head=128):
    rng = np.random.default_rng(past)
    inputs = [helper.make_tensor_value_info("q", TensorProto.FLOAT, [1, 1, heads * head]),
              helper.make_tensor_value_info("k", TensorProto.FLOAT, [1, 1, kv_heads * head]),
              helper.make_tensor_value_info("v", TensorProto.FLOAT, [1, 1, kv_heads * head]),
              helper.make_tensor_value_info("past_k", TensorProto.FLOAT, [1, kv_heads, past, head]),
              helper.make_tensor_value_info("past_v", TensorProto.FLOAT, [1, kv_heads, past, head]),
              helper.make_tensor_value_info("seqlens", TensorProto.INT32, [1]),
              helper.make_tensor_value_info("total", TensorProto.INT32, [])]
    node = helper.make_node("GroupQueryAttention", ["q", "k", "v", "past_k", "past_v", "seqlens", "total"],
                            ["y", "present_k", "present_v"], domain=MS, num_heads=heads, kv_num_heads=kv_heads)
    outputs = [onnx.ValueInfoProto(name=name) for name in ("y", "present_k", "present_v")]
    model = helper.make_model(helper.make_graph([node], "gqa", inputs, outputs), opset_imports=opsets())
    feeds = {"q": rng.standard_normal((1, 1, heads * head)).astype(np.float32),
             "k": rng.standard_normal((1, 1, kv_heads * head)).astype(np.float32),
             "v": rng.standard_normal((1, 1, kv_heads * head)).astype(np.float32),
             "past_k": rng.standard_normal((1, kv_heads, past, head)).astype(np.float32),
             "past_v": rng.standard_normal((1, kv_heads, past, head)).astype(np.float32),
             "seqlens": np.array([past], np.int32), "total": np.array(past + 1, np.int32)}
    return Case(f"GroupQueryAttention decode, past {past}", model.SerializeToString(), feeds, rtol=1e-4, atol=1e-5,
                notes=f"{heads} query heads, {kv_heads} key/value heads of {head}")


def builder_decoder(past=128):
    """One int4 decode step of a Llama-shaped decoder (hidden 768, 12 layers, vocab 32000: ~125M parameters)."""
    cache = Path(os.environ.get("NXRT_BENCH_CACHE", Path.home() / ".cache" / "nxrt-bench")) / "llama125m_int4"
    if not (cache / "model.onnx").exists():
        checkpoint = cache.parent / "llama125m_hf"
        script = (
            "import sys, torch, transformers\n"
            "torch.manual_seed(0)\n"
            "config = transformers.LlamaConfig(vocab_size=32000, hidden_size=768, intermediate_size=2048,\n"
            "    num_hidden_layers=12, num_attention_heads=12, num_key_value_heads=4, max_position_embeddings=2048)\n"
            "transformers.LlamaForCausalLM(config).save_pretrained(sys.argv[1])\n")
        subprocess.run([sys.executable, "-c", script, str(checkpoint)], check=True)
        for file in ("tokenizer.json", "tokenizer_config.json", "vocab.json"):
            (checkpoint / file).write_bytes((TOKENIZER / file).read_bytes())
        subprocess.run([sys.executable, "-m", "onnxruntime_genai.models.builder", "-m", "local/llama125m", "-i",
                        str(checkpoint), "-o", str(cache), "-p", "int4", "-e", "cpu"], check=True,
                       capture_output=True)
    config = json.loads((cache / "genai_config.json").read_text())["model"]["decoder"]
    layers, kv_heads, head = config["num_hidden_layers"], config["num_key_value_heads"], config["head_size"]
    rng = np.random.default_rng(0)
    feeds = {"input_ids": np.array([[17]], np.int64), "attention_mask": np.ones((1, past + 1), np.int64)}
    for i in range(layers):
        for kind in ("key", "value"):
            feeds[f"past_key_values.{i}.{kind}"] = rng.standard_normal((1, kv_heads, past, head)).astype(np.float32)
    model = onnx.load(str(cache / "model.onnx"))  # external data loaded: the suite feeds model bytes
    return Case(f"builder Llama ~125M int4 decode step, past {past}", model.SerializeToString(), feeds, rtol=5e-2,
                atol=5e-2, notes="onnxruntime_genai builder, -p int4 -e cpu (MatMulNBits accuracy_level 4)")


def build_all():
    return [matmul_nbits(4096, 4096), matmul_nbits(4096, 11008), matmul_nbits(4096, 4096, bits=8),
            matmul_nbits(4096, 4096, bits=8, accuracy_level=0), gqa_decode(), builder_decoder()]
