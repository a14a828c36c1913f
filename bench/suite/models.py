"""Benchmark models for the nxrt vs onnxruntime suite, built in memory with onnx.helper (nothing is downloaded).

Each entry of ``build_all()`` is a :class:`Case`: a name, the serialized model, a dict of input arrays and the
tolerances used to compare the two runtimes' outputs. Weights and inputs come from a fixed seed so that every run
measures the same numbers. All models use opset 20 (Gelu is an opset-20 op) and IR version 10.
"""

from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 20
IR_VERSION = 10


@dataclass
class Case:
    name: str
    model: bytes
    feeds: dict
    rtol: float = 1e-3
    atol: float = 1e-4
    notes: str = ""


@dataclass
class GraphBuilder:
    """Collects nodes and initializers; ``op`` returns the name of the node's (first) output."""

    rng: np.random.Generator
    nodes: list = field(default_factory=list)
    initializers: list = field(default_factory=list)
    counter: int = 0

    def fresh(self, stem):
        self.counter += 1
        return f"{stem}_{self.counter}"

    def const(self, array, stem="w"):
        name = self.fresh(stem)
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def weight(self, shape, scale=None, dtype=np.float32):
        fan_in = shape[0] if len(shape) == 2 else int(np.prod(shape[1:]))
        scale = scale if scale is not None else 1.0 / np.sqrt(fan_in)
        return self.const((self.rng.standard_normal(shape) * scale).astype(dtype))

    def op(self, op_type, inputs, stem=None, **attrs):
        out = self.fresh(stem or op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], **attrs))
        return out

    def model(self, name, inputs, outputs):
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        model.ir_version = IR_VERSION
        onnx.checker.check_model(model)
        return model.SerializeToString()


def tensor_info(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def finish(g, last, out_name):
    """Makes ``last`` (the output of the final node) the graph output ``out_name``."""
    assert g.nodes[-1].output[0] == last
    g.nodes[-1].output[0] = out_name


def simple_add(batch):
    g = GraphBuilder(np.random.default_rng(0))
    finish(g, g.op("Add", ["x", "y"]), "z")
    model = g.model(f"simple_add_{batch}", [tensor_info("x", TensorProto.FLOAT, [batch]),
                                            tensor_info("y", TensorProto.FLOAT, [batch])],
                    [tensor_info("z", TensorProto.FLOAT, [batch])])
    rng = np.random.default_rng(1)
    feeds = {"x": rng.standard_normal(batch).astype(np.float32), "y": rng.standard_normal(batch).astype(np.float32)}
    return Case(f"simple_add B={batch:_}", model, feeds, notes="one elementwise Add")


def mlp(batch, width=1024, layers=3):
    g = GraphBuilder(np.random.default_rng(2))
    x = "x"
    for _ in range(layers):
        w = g.weight([width, width])
        x = g.op("Relu", [g.op("Gemm", [x, w, g.weight([width], scale=0.1)])])
    finish(g, x, "y")
    model = g.model(f"mlp_{batch}", [tensor_info("x", TensorProto.FLOAT, [batch, width])],
                    [tensor_info("y", TensorProto.FLOAT, [batch, width])])
    feeds = {"x": np.random.default_rng(3).standard_normal((batch, width)).astype(np.float32)}
    return Case(f"mlp 3x{width} B={batch}", model, feeds, notes="3 x (Gemm + Relu)")


def conv(g, x, cin, cout, kernel, stride=1):
    """Conv with its BatchNormalization folded in: the folded scale lives in the weights, the shift in the bias."""
    w = g.weight([cout, cin, kernel, kernel], scale=np.sqrt(2.0 / (cin * kernel * kernel)))
    b = g.weight([cout], scale=0.05)
    pad = kernel // 2
    return g.op("Conv", [x, w, b], kernel_shape=[kernel, kernel], strides=[stride, stride], pads=[pad] * 4)


def residual_block(g, x, cin, cout, stride):
    h = g.op("Relu", [conv(g, x, cin, cout, 3, stride)])
    h = conv(g, h, cout, cout, 3)
    skip = x if stride == 1 and cin == cout else conv(g, x, cin, cout, 1, stride)
    return g.op("Relu", [g.op("Add", [h, skip])])


def small_cnn(batch=1):
    g = GraphBuilder(np.random.default_rng(4))
    x = g.op("Relu", [conv(g, "x", 3, 32, 7, 2)])
    x = g.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    for cin, cout, stride in [(32, 32, 1), (32, 32, 1), (32, 64, 2), (64, 64, 1)]:
        x = residual_block(g, x, cin, cout, stride)
    x = g.op("Flatten", [g.op("GlobalAveragePool", [x])])
    finish(g, g.op("Gemm", [x, g.weight([64, 1000]), g.weight([1000], scale=0.1)]), "logits")
    model = g.model("small_cnn", [tensor_info("x", TensorProto.FLOAT, [batch, 3, 224, 224])],
                    [tensor_info("logits", TensorProto.FLOAT, [batch, 1000])])
    feeds = {"x": np.random.default_rng(5).standard_normal((batch, 3, 224, 224)).astype(np.float32)}
    return Case(f"resnet-style cnn B={batch}", model, feeds,
                notes="7x7/2 stem, maxpool, 4 residual blocks (32-64 ch), folded BN, GAP + Gemm")


def linear(g, x, din, dout):
    return g.op("Add", [g.op("MatMul", [x, g.weight([din, dout])]), g.weight([dout], scale=0.02)])


def layer_norm(g, x, dim):
    gamma = g.const(np.ones(dim, np.float32) + 0.1 * g.rng.standard_normal(dim).astype(np.float32))
    return g.op("LayerNormalization", [x, gamma, g.weight([dim], scale=0.1)], axis=-1, epsilon=1e-5)


def attention(g, x, seq, dim, heads, mask=None):
    """Multi-head self-attention from MatMul/Softmax/Transpose; ``mask`` is added to the scaled scores."""
    head_dim = dim // heads
    split = g.const(np.array([1, seq, heads, head_dim], np.int64), "shape")
    q = g.op("Transpose", [g.op("Reshape", [linear(g, x, dim, dim), split])], perm=[0, 2, 1, 3])
    k = g.op("Transpose", [g.op("Reshape", [linear(g, x, dim, dim), split])], perm=[0, 2, 3, 1])
    v = g.op("Transpose", [g.op("Reshape", [linear(g, x, dim, dim), split])], perm=[0, 2, 1, 3])
    scores = g.op("Mul", [g.op("MatMul", [q, k]), g.const(np.array(1.0 / np.sqrt(head_dim), np.float32))])
    if mask is not None:
        scores = g.op("Add", [scores, mask])
    ctx = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
    merged = g.op("Reshape", [g.op("Transpose", [ctx], perm=[0, 2, 1, 3]),
                              g.const(np.array([1, seq, dim], np.int64), "shape")])
    return linear(g, merged, dim, dim)


def encoder_layer(g, x, seq, dim, heads, mask=None, gelu="none"):
    x = g.op("Add", [x, attention(g, layer_norm(g, x, dim), seq, dim, heads, mask)])
    h = g.op("Gelu", [linear(g, layer_norm(g, x, dim), dim, 4 * dim)], approximate=gelu)
    return g.op("Add", [x, linear(g, h, 4 * dim, dim)])


def vit_encoder(layers=4, dim=192, heads=3, patches=196, patch_values=16 * 16 * 3):
    g = GraphBuilder(np.random.default_rng(6))
    seq = patches + 1
    x = g.op("MatMul", ["patches", g.weight([patch_values, dim])])
    x = g.op("Concat", [g.weight([1, 1, dim], scale=0.02), x], axis=1)
    x = g.op("Add", [x, g.weight([1, seq, dim], scale=0.02)])
    for _ in range(layers):
        x = encoder_layer(g, x, seq, dim, heads)
    finish(g, layer_norm(g, x, dim), "tokens")
    model = g.model("vit_encoder", [tensor_info("patches", TensorProto.FLOAT, [1, patches, patch_values])],
                    [tensor_info("tokens", TensorProto.FLOAT, [1, seq, dim])])
    feeds = {"patches": np.random.default_rng(7).standard_normal((1, patches, patch_values)).astype(np.float32)}
    return Case(f"vit encoder S={seq} D={dim}", model, feeds,
                notes=f"patch-embed MatMul + cls/pos, {layers} pre-LN layers, {heads} heads, Gelu MLP")


def gpt2_decoder(seq, blocks=2, dim=768, heads=12):
    g = GraphBuilder(np.random.default_rng(8))
    causal = np.triu(np.full((seq, seq), -1e4, np.float32), k=1)
    mask = g.const(causal, "causal_mask")
    x = "hidden"
    for _ in range(blocks):
        x = encoder_layer(g, x, seq, dim, heads, mask, gelu="tanh")
    finish(g, layer_norm(g, x, dim), "out")
    model = g.model("gpt2_decoder", [tensor_info("hidden", TensorProto.FLOAT, [1, seq, dim])],
                    [tensor_info("out", TensorProto.FLOAT, [1, seq, dim])])
    feeds = {"hidden": np.random.default_rng(9).standard_normal((1, seq, dim)).astype(np.float32)}
    return Case(f"gpt2 decoder S={seq}", model, feeds,
                notes=f"{blocks} blocks, D={dim}, {heads} heads, causal mask Add, tanh Gelu MLP")


def weno_stencil(points=1_000_000):
    """Fifth-order WENO reconstruction of u at i+1/2 on a 1-D grid, as Slice + elementwise float64 ops."""
    g = GraphBuilder(np.random.default_rng(10))
    d = lambda value: g.const(np.array(value, np.float64), "c")
    axis = g.const(np.array([0], np.int64), "axis")

    def shifted(offset):
        start = g.const(np.array([offset], np.int64), "start")
        end = g.const(np.array([offset + points], np.int64), "end")
        return g.op("Slice", ["u", start, end, axis])

    um2, um1, u0, up1, up2 = (shifted(o) for o in range(5))
    add, sub, mul, div = (lambda a, b, t=t: g.op(t, [a, b]) for t in ("Add", "Sub", "Mul", "Div"))
    sq = lambda a: mul(a, a)

    def smoothness(a, b, c):
        curvature = add(sub(a, mul(d(2.0), b)), c)
        return add(mul(d(13.0 / 12.0), sq(curvature)), mul(d(0.25), sq(sub(a, c))))

    beta = [smoothness(um2, um1, u0), smoothness(um1, u0, up1), smoothness(u0, up1, up2)]
    alpha = [div(d(w), sq(add(d(1e-6), b))) for w, b in zip((0.1, 0.6, 0.3), beta)]
    total = add(add(alpha[0], alpha[1]), alpha[2])

    def poly(a, b, c, ca, cb, cc):
        return add(add(mul(d(ca), a), mul(d(cb), b)), mul(d(cc), c))

    stencils = [poly(um2, um1, u0, 2 / 6, -7 / 6, 11 / 6), poly(um1, u0, up1, -1 / 6, 5 / 6, 2 / 6),
                poly(u0, up1, up2, 2 / 6, 5 / 6, -1 / 6)]
    weighted = add(add(mul(alpha[0], stencils[0]), mul(alpha[1], stencils[1])), mul(alpha[2], stencils[2]))
    finish(g, div(weighted, total), "u_face")
    op_count = len(g.nodes)
    model = g.model("weno_stencil", [tensor_info("u", TensorProto.DOUBLE, [points + 4])],
                    [tensor_info("u_face", TensorProto.DOUBLE, [points])])
    x = np.linspace(0.0, 8.0 * np.pi, points + 4)
    feeds = {"u": np.sin(x) + 0.1 * np.random.default_rng(11).standard_normal(points + 4)}
    return Case(f"weno stencil f64 N={points:_}", model, feeds, rtol=1e-9, atol=1e-12,
                notes=f"{op_count} ops: 5 Slices + Add/Sub/Mul/Div on doubles")


def gemm(n, dtype):
    proto = TensorProto.FLOAT if dtype == np.float32 else TensorProto.DOUBLE
    g = GraphBuilder(np.random.default_rng(12))
    finish(g, g.op("MatMul", ["a", "b"]), "c")
    model = g.model("gemm", [tensor_info("a", proto, [n, n]), tensor_info("b", proto, [n, n])],
                    [tensor_info("c", proto, [n, n])])
    rng = np.random.default_rng(13)
    feeds = {"a": rng.standard_normal((n, n)).astype(dtype), "b": rng.standard_normal((n, n)).astype(dtype)}
    kind = "sgemm" if dtype == np.float32 else "dgemm"
    tol = (1e-3, 1e-3) if dtype == np.float32 else (1e-9, 1e-9)
    return Case(f"{kind} {n}^3", model, feeds, rtol=tol[0], atol=tol[1], notes="MatMul of two inputs")


def reduce_sum(shape, axis, dtype):
    """ReduceSum over one axis: the last (contiguous rows) or an outer one (strided columns)."""
    proto = TensorProto.FLOAT if dtype == np.float32 else TensorProto.DOUBLE
    g = GraphBuilder(np.random.default_rng(14))
    axes = g.const(np.array([axis], np.int64), "axes")
    finish(g, g.op("ReduceSum", ["x", axes], keepdims=0), "y")
    out_shape = [d for i, d in enumerate(shape) if i != axis % len(shape)]
    model = g.model("reduce_sum", [tensor_info("x", proto, shape)], [tensor_info("y", proto, out_shape)])
    feeds = {"x": np.random.default_rng(15).standard_normal(shape).astype(dtype)}
    kind = "f32" if dtype == np.float32 else "f64"
    tol = (1e-4, 1e-3) if dtype == np.float32 else (1e-10, 1e-10)
    dims = "x".join(str(d) for d in shape)
    return Case(f"reduce_sum {kind} {dims} axis {axis}", model, feeds, rtol=tol[0], atol=tol[1],
                notes="compensated float sums (docs/numerics.md)")


def build_all():
    """Every benchmark case, in table order."""
    return [
        simple_add(4),
        simple_add(1_000_000),
        mlp(1),
        mlp(256),
        small_cnn(1),
        vit_encoder(),
        gpt2_decoder(1),
        gpt2_decoder(128),
        weno_stencil(),
        gemm(1024, np.float32),
        gemm(1024, np.float64),
        reduce_sum([1024, 4096], -1, np.float32),
        reduce_sum([4096, 1024], 0, np.float32),
        reduce_sum([64, 1024, 64], 1, np.float32),
        reduce_sum([1024, 4096], -1, np.float64),
        reduce_sum([4096, 1024], 0, np.float64),
    ]
