"""Whole models: MLP, CNN, ViT, GPT-2-style decoder (Flax NNX and plain JAX), an Equinox classifier and float64
physics kernels."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from jax_harness import check, op_types, optional_module

nnx = optional_module("flax.nnx")
eqx = optional_module("equinox")


class MLP(nnx.Module):
    def __init__(self, sizes, rngs):
        self.layers = nnx.List([nnx.Linear(a, b, rngs=rngs) for a, b in zip(sizes[:-1], sizes[1:])])
        self.norm = nnx.LayerNorm(sizes[-1], rngs=rngs)

    def __call__(self, x):
        for layer in self.layers[:-1]:
            x = nnx.gelu(layer(x))
        return self.norm(self.layers[-1](x))


class CNN(nnx.Module):
    def __init__(self, rngs):
        self.conv1 = nnx.Conv(1, 8, kernel_size=(3, 3), rngs=rngs)
        self.conv2 = nnx.Conv(8, 16, kernel_size=(3, 3), rngs=rngs)
        self.bn = nnx.BatchNorm(16, use_running_average=True, rngs=rngs)
        self.head = nnx.Linear(16 * 7 * 7, 10, rngs=rngs)

    def __call__(self, x):
        x = nnx.avg_pool(nnx.relu(self.conv1(x)), (2, 2), strides=(2, 2))
        x = nnx.max_pool(nnx.relu(self.bn(self.conv2(x))), (2, 2), strides=(2, 2))
        return nnx.log_softmax(self.head(x.reshape(x.shape[0], -1)))


class Block(nnx.Module):
    def __init__(self, dim, heads, rngs, causal):
        self.ln1 = nnx.LayerNorm(dim, rngs=rngs)
        self.ln2 = nnx.LayerNorm(dim, rngs=rngs)
        self.attn = nnx.MultiHeadAttention(num_heads=heads, in_features=dim, decode=False, deterministic=True,
                                           rngs=rngs)
        self.fc1 = nnx.Linear(dim, 4 * dim, rngs=rngs)
        self.fc2 = nnx.Linear(4 * dim, dim, rngs=rngs)
        self.causal = causal

    def __call__(self, x):
        mask = nnx.make_causal_mask(x[..., 0]) if self.causal else None
        x = x + self.attn(self.ln1(x), mask=mask)
        return x + self.fc2(nnx.gelu(self.fc1(self.ln2(x))))


class ViT(nnx.Module):
    def __init__(self, rngs, dim=16, patch=4, depth=2):
        self.patch = nnx.Conv(3, dim, kernel_size=(patch, patch), strides=(patch, patch), padding="VALID",
                              rngs=rngs)
        self.cls = nnx.Param(jax.random.normal(rngs.params(), (1, 1, dim)) * 0.02)
        self.pos = nnx.Param(jax.random.normal(rngs.params(), (1, 5, dim)) * 0.02)
        self.blocks = nnx.List([Block(dim, 2, rngs, causal=False) for _ in range(depth)])
        self.norm = nnx.LayerNorm(dim, rngs=rngs)
        self.head = nnx.Linear(dim, 10, rngs=rngs)

    def __call__(self, images):
        x = self.patch(images)
        x = x.reshape(x.shape[0], -1, x.shape[-1])
        cls = jnp.broadcast_to(self.cls[...], (x.shape[0], 1, x.shape[-1]))
        x = jnp.concatenate([cls, x], axis=1) + self.pos[...]
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x[:, 0]))


class GPT2(nnx.Module):
    def __init__(self, rngs, vocab=50, dim=16, depth=2, max_len=16):
        self.wte = nnx.Embed(vocab, dim, rngs=rngs)
        self.wpe = nnx.Embed(max_len, dim, rngs=rngs)
        self.blocks = nnx.List([Block(dim, 2, rngs, causal=True) for _ in range(depth)])
        self.ln_f = nnx.LayerNorm(dim, rngs=rngs)

    def __call__(self, tokens):
        positions = jnp.arange(tokens.shape[1])[None, :]
        x = self.wte(tokens) + self.wpe(positions)
        for block in self.blocks:
            x = block(x)
        return self.wte.attend(self.ln_f(x))


def test_mlp():
    model = MLP([8, 32, 32, 4], nnx.Rngs(0))
    check(model, [("B", 8)], n=3)


def test_mlp_f64():
    with jax.enable_x64(True):
        model = MLP([4, 16, 3], nnx.Rngs(0))
        nnx.update(model, jax.tree.map(lambda a: a.astype(jnp.float64), nnx.state(model)))
    check(model, [jax.ShapeDtypeStruct(("B", 4), jnp.float64)], x64=True)


def test_cnn():
    model, _ = check(CNN(nnx.Rngs(0)), [("B", 28, 28, 1)])
    ops = set(op_types(model))
    assert {"Conv", "BatchNormalization", "AveragePool", "MaxPool", "Relu", "Gemm", "LogSoftmax"} <= ops


@pytest.mark.parametrize("opset", [21, 23])
def test_vit(opset):
    model, _ = check(ViT(nnx.Rngs(0)), [("B", 8, 8, 3)], opset=opset)
    ops = set(op_types(model))
    assert {"Conv", "LayerNormalization", "Gelu"} <= ops
    assert ("Attention" in ops) == (opset >= 23)


def test_gpt2_decoder():
    model = GPT2(nnx.Rngs(0))
    exported, _ = check(model, [jax.ShapeDtypeStruct(("B", "T"), jnp.int32)], int_range=(0, 50),
                        dims={"T": [3, 7, 1, 16]}, n=4)
    dims = [d.dim_param for d in exported.graph.input[0].type.tensor_type.shape.dim]
    assert dims == ["B", "T"]


def test_gpt2_plain_jax_greedy_step():
    rng = np.random.default_rng(0)
    vocab, dim = 20, 8
    emb = rng.standard_normal((vocab, dim)).astype(np.float32) * 0.3
    wq, wk, wv = (rng.standard_normal((dim, dim)).astype(np.float32) * 0.3 for _ in range(3))

    def step(tokens):
        x = jnp.asarray(emb)[tokens]
        q, k, v = x @ wq, x @ wk, x @ wv
        t = tokens.shape[1]
        scores = jnp.einsum("btd,bsd->bts", q, k) / np.sqrt(dim)
        scores = jnp.where(jnp.tril(jnp.ones((t, t), bool)), scores, -1e9)
        h = jax.nn.softmax(scores, axis=-1) @ v
        logits = h[:, -1] @ emb.T
        return jnp.argmax(logits, axis=-1), lax.top_k(logits, 3)[1]

    check(step, [jax.ShapeDtypeStruct(("B", "T"), jnp.int32)], int_range=(0, vocab), n=3)


def test_equinox_cnn_classifier():
    class Net(eqx.Module):
        conv: eqx.nn.Conv2d
        pool: eqx.nn.MaxPool2d
        head: eqx.nn.Linear

        def __init__(self, key):
            k1, k2 = jax.random.split(key)
            self.conv = eqx.nn.Conv2d(1, 4, 3, padding=1, key=k1)
            self.pool = eqx.nn.MaxPool2d(2, 2)
            self.head = eqx.nn.Linear(4 * 4 * 4, 3, key=k2)

        def __call__(self, x):
            return jax.nn.softmax(self.head(self.pool(jax.nn.relu(self.conv(x))).reshape(-1)))

    check(jax.vmap(Net(jax.random.PRNGKey(0))), [("B", 1, 8, 8)])


def test_physics_nbody_f64():
    def accelerations(pos, mass):
        diff = pos[None, :, :] - pos[:, None, :]
        dist2 = jnp.sum(diff ** 2, axis=-1) + 1e-3
        inv = mass[None, :] * dist2 ** -1.5
        return jnp.sum(diff * inv[..., None], axis=1)

    def simulate(pos, vel, mass):
        def step(state, _):
            p, v = state
            v = v + 0.01 * accelerations(p, mass)
            p = p + 0.01 * v
            return (p, v), jnp.sum(0.5 * mass[:, None] * v ** 2)
        (p, v), energy = lax.scan(step, (pos, vel), None, length=20)
        return p, v, energy

    spec = lambda *s: jax.ShapeDtypeStruct(s, jnp.float64)  # noqa: E731
    check(simulate, [spec("N", 3), spec("N", 3), spec("N",)], x64=True,
          input_gen=lambda rng, s: [rng.standard_normal((s["N"], 3)), rng.standard_normal((s["N"], 3)) * 0.1,
                                    rng.uniform(0.5, 1.5, s["N"])])


def test_physics_heat_equation_f64():
    def heat(u):
        def step(u, _):
            lap = jnp.roll(u, 1) + jnp.roll(u, -1) - 2 * u
            return u + 0.1 * lap, None
        return lax.fori_loop(0, 30, lambda i, v: step(v, None)[0], u)

    check(heat, [jax.ShapeDtypeStruct((32,), jnp.float64)], x64=True)


def test_physics_rk4_oscillator_f64():
    def rk4(y, dt):
        f = lambda y: jnp.stack([y[..., 1], -jnp.sin(y[..., 0])], axis=-1)  # noqa: E731
        def step(y, _):
            k1 = f(y)
            k2 = f(y + dt / 2 * k1)
            k3 = f(y + dt / 2 * k2)
            k4 = f(y + dt * k3)
            return y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4), y[..., 0]
        return lax.scan(step, y, None, length=25)

    check(rk4, [jax.ShapeDtypeStruct(("B", 2), jnp.float64), jax.ShapeDtypeStruct((), jnp.float64)], x64=True,
          input_gen=lambda rng, s: [rng.standard_normal((s["B"], 2)), np.float64(0.05)])


def test_lennard_jones_energy_f64():
    def energy(pos):
        diff = pos[:, None, :] - pos[None, :, :]
        r2 = jnp.sum(diff ** 2, -1) + jnp.eye(pos.shape[0])
        inv6 = (1.0 / r2) ** 3
        e = 4.0 * (inv6 ** 2 - inv6) * (1.0 - jnp.eye(pos.shape[0]))
        return 0.5 * jnp.sum(e)

    check(energy, [jax.ShapeDtypeStruct((6, 3), jnp.float64)], x64=True,
          input_gen=lambda rng, s: [rng.standard_normal((6, 3)) * 2.0])


def test_model_has_symbolic_output_shape():
    model, _ = check(MLP([3, 5], nnx.Rngs(0)), [("B", 3)])
    out = model.graph.output[0].type.tensor_type.shape.dim
    assert out[0].dim_param == "B" and out[1].dim_value == 5
    assert "Loop" not in op_types(model)
