"""The nxrt.jax API: to_onnx arguments, symbolic dims, float64 mode, errors, plugins, ONNX functions, verify."""

import jax
import jax.numpy as jnp
import numpy as np
import onnx
import pytest
from jax import export, lax

import nxrt
import nxrt.jax
from nxrt.jax import registry

from jax_harness import check, op_types, optional_module



def simple_add(x, y):
    return x + y


def test_issue_example_writes_file(tmp_path):
    path = tmp_path / "simple_add.onnx"
    spec = jax.ShapeDtypeStruct(("B",), jnp.float32)
    model = nxrt.jax.to_onnx(simple_add, inputs=[spec] * 2, output_path=str(path), opset=22)
    assert isinstance(model, onnx.ModelProto) and path.exists()
    loaded = onnx.load(str(path))
    assert loaded.opset_import[0].version == 22
    assert [i.name for i in loaded.graph.input] == ["x", "y"]
    x = np.arange(5, dtype=np.float32)
    (out,) = nxrt.InferenceSession(str(path)).run(None, {"x": x, "y": x})
    np.testing.assert_array_equal(out, 2 * x)


def test_names_and_symbolic_dims():
    model = nxrt.jax.to_onnx(lambda a, b: (a @ b, a.sum(axis=1)), [("B", 4), (4, "N")], input_names=["lhs", "rhs"],
                             output_names=["product", "total"], model_name="named")
    graph = model.graph
    assert graph.name == "named"
    assert [i.name for i in graph.input] == ["lhs", "rhs"]
    assert [o.name for o in graph.output] == ["product", "total"]
    dims = [[d.dim_param or d.dim_value for d in o.type.tensor_type.shape.dim] for o in graph.output]
    assert dims == [["B", "N"], ["B"]]
    result = nxrt.jax.verify(lambda a, b: (a @ b, a.sum(axis=1)), model, n=3)
    assert result.ok(1e-5), result
    assert len({tuple(t["sizes"].items()) for t in result.trials}) == 3


def test_user_symbolic_shape_specs():
    b, t = export.symbolic_shape("b, t")
    spec = jax.ShapeDtypeStruct((b, t, 3), jnp.float32)
    model, _ = check(lambda x: jnp.mean(x, axis=1), [spec])
    assert model.graph.input[0].type.tensor_type.shape.dim[1].dim_param == "t"


def test_symbolic_expression_dims():
    model, _ = check(lambda x: jnp.concatenate([x, x], axis=0).reshape(-1), [("B", 3)])
    dim = model.graph.output[0].type.tensor_type.shape.dim[0]
    assert dim.dim_param == "6*B"


def test_double_precision_end_to_end():
    fn = lambda x: jnp.sin(x) * 0.1 + jnp.float64(1e-12)  # noqa: E731
    model, result = check(fn, [("B", 3)], x64=True)
    assert model.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.DOUBLE
    assert model.graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.DOUBLE
    assert all(t.data_type != onnx.TensorProto.FLOAT for t in model.graph.initializer)
    assert result.max_error["nxrt"] <= 1e-12


def test_without_x64_float64_specs_become_float32():
    model = nxrt.jax.to_onnx(lambda x: x * 2, [jax.ShapeDtypeStruct((3,), jnp.float64)])
    assert model.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT


def test_input_params_static_and_dynamic():
    nnx = optional_module("flax.nnx")
    layer = nnx.Dropout(0.5, rngs=nnx.Rngs(0))

    def fn(x, *, deterministic, scale):
        return layer(x, deterministic=deterministic) * scale

    params = {"deterministic": True, "scale": jax.ShapeDtypeStruct((), jnp.float32)}
    model, _ = check(fn, [("B", 4)], input_params=params)
    assert [i.name for i in model.graph.input] == ["x", "scale"]


def test_opset_floor():
    with pytest.raises(ValueError, match="opset"):
        nxrt.jax.to_onnx(simple_add, [(2,), (2,)], opset=13)


@pytest.mark.parametrize("opset", [18, 21, 22])
def test_opsets(opset):
    check(lambda x: jnp.max(jax.nn.relu(x), axis=1), [("B", 3)], opset=opset)


_my_prim = jax.extend.core.Primitive("nxrt_test_softsign")
_my_prim.def_impl(lambda x: x / (1 + jnp.abs(x)))
_my_prim.def_abstract_eval(lambda x: jax.core.ShapedArray(x.shape, x.dtype))


def uses_custom_primitive(x):
    return _my_prim.bind(x) * 2


def test_unsupported_primitive_error_names_it_and_where():
    with pytest.raises(nxrt.jax.UnsupportedPrimitiveError) as info:
        nxrt.jax.to_onnx(uses_custom_primitive, [("B",)])
    text = str(info.value)
    assert "nxrt_test_softsign" in text
    assert "test_api.py" in text and "uses_custom_primitive" in text
    assert "register_primitive" in text
    assert info.value.primitive == "nxrt_test_softsign"


def test_plugin_handler(monkeypatch):
    monkeypatch.setattr(registry, "_HANDLERS", dict(registry._HANDLERS))

    @nxrt.jax.register_primitive("nxrt_test_softsign")
    def _softsign(ctx, eqn, x):
        return ctx.op("Softsign", x)

    model, _ = check(uses_custom_primitive, [("B", 3)])
    assert "Softsign" in op_types(model)
    assert "nxrt_test_softsign" in nxrt.jax.registered_primitives()


def test_plugin_can_override_builtin(monkeypatch):
    monkeypatch.setattr(registry, "_HANDLERS", dict(registry._HANDLERS))

    @nxrt.jax.register_primitive("logistic")
    def _logistic(ctx, eqn, x):
        one = ctx.scalar(1.0, np.float32)
        return ctx.op("Div", one, ctx.op("Add", one, ctx.op("Exp", ctx.op("Neg", x))))

    model, _ = check(jax.nn.sigmoid, [("B",)])
    assert "Sigmoid" not in op_types(model)


def test_unsupported_param_combination_has_detail():
    with pytest.raises(nxrt.jax.UnsupportedPrimitiveError, match="batch_group_count"):
        nxrt.jax.to_onnx(lambda x, w: lax.conv_general_dilated(x, w, (1,), "VALID", batch_group_count=2),
                         [(2, 1, 5), (2, 1, 3)])


def mlp_block_class(nnx):
    @nxrt.jax.onnx_function
    class MLPBlock(nnx.Module):
        def __init__(self, dim, rngs):
            self.fc = nnx.Linear(dim, dim, rngs=rngs)
            self.norm = nnx.LayerNorm(dim, rngs=rngs)

        def __call__(self, x):
            return self.norm(nnx.gelu(self.fc(x))) + x

    return MLPBlock


def test_onnx_function_for_module_class():
    nnx = optional_module("flax.nnx")
    mlp_block = mlp_block_class(nnx)
    blocks = [mlp_block(4, nnx.Rngs(i)) for i in range(3)]

    def model(x):
        for block in blocks:
            x = block(x)
        return x

    exported, _ = check(model, [("B", 4)])
    assert [f.name for f in exported.functions] == ["MLPBlock"]
    calls = [n for n in exported.graph.node if n.op_type == "MLPBlock"]
    assert len(calls) == 3 and all(n.domain == "nxrt.jax.functions" for n in calls)


def test_onnx_function_decorated_function_and_nesting():
    @nxrt.jax.onnx_function(name="Swish")
    def swish(x):
        return x * jax.nn.sigmoid(x)

    @nxrt.jax.onnx_function
    def block(x):
        return swish(x) @ jnp.ones((3, 3)) + swish(x * 2)

    exported, _ = check(lambda x: block(x) - block(x + 1), [("B", 3)])
    assert sorted(f.name for f in exported.functions) == ["Swish", "block"]


def test_onnx_function_symbolic_dims_inside():
    @nxrt.jax.onnx_function
    def flatten_rows(x):
        return x.reshape(x.shape[0], -1) * jnp.arange(x.shape[1] * x.shape[2], dtype=jnp.float32)

    check(flatten_rows, [("B", 2, 3)])


def test_decorated_function_still_runs_in_jax():
    @nxrt.jax.onnx_function
    def f(x):
        return x + 1

    np.testing.assert_allclose(np.asarray(f(jnp.zeros(3))), np.ones(3))


def test_verify_reports_errors_per_runtime():
    model = nxrt.jax.to_onnx(jnp.tanh, [("B", 3)])
    result = nxrt.jax.verify(jnp.tanh, model, n=2, runtimes=("nxrt", "onnxruntime"))
    assert set(result.max_error) == {"nxrt", "onnxruntime"}
    assert "max error" in str(result)


def test_verify_detects_a_wrong_model():
    model = nxrt.jax.to_onnx(jnp.tanh, [("B", 3)])
    result = nxrt.jax.verify(jnp.sin, model, n=2)
    assert not result.ok(1e-3)


def test_verify_accepts_bytes_and_path(tmp_path):
    model = nxrt.jax.to_onnx(jnp.exp, [(3,)], output_path=str(tmp_path / "m.onnx"))
    assert nxrt.jax.verify(jnp.exp, model.SerializeToString(), n=1).ok(1e-6)
    assert nxrt.jax.verify(jnp.exp, str(tmp_path / "m.onnx"), n=1).ok(1e-6)


def test_required_primitives_registered():
    required = {"add", "sub", "mul", "div", "dot_general", "conv_general_dilated", "reduce_sum", "reduce_max",
                "reduce_min", "reduce_prod", "argmax", "argmin", "broadcast_in_dim", "reshape", "transpose",
                "squeeze", "concatenate", "pad", "slice", "dynamic_slice", "dynamic_update_slice", "gather",
                "scatter", "scatter-add", "select_n", "iota", "sort", "top_k", "cumsum", "cumprod", "cummax",
                "convert_element_type", "integer_pow", "erf", "logistic", "clamp", "rem", "pjit", "jit",
                "custom_jvp_call", "custom_vjp_call", "remat2", "cond", "while", "scan", "reduce_window_sum",
                "reduce_window_max", "and", "or", "not", "xor", "eq", "ne", "lt", "le", "gt", "ge",
                "shift_left", "split", "rev", "expand_dims", "scatter-sub", "scatter-mul", "scatter-min",
                "scatter-max", "unstack", "population_count", "clz", "cummin", "reduce_xor", "lgamma", "digamma",
                "reduce_window_min", "reduce_window", "dynamic_update_slice", "while", "custom_vjp_call"}
    assert required <= set(nxrt.jax.registered_primitives())


def test_full_onnx_check_with_shape_inference():
    model = nxrt.jax.to_onnx(lambda x, w: jax.nn.relu(x @ w), [("B", 4), (4, 2)])
    onnx.checker.check_model(model, full_check=True)


def test_user_names_that_look_generated_do_not_clash():
    fn = lambda a, b: (a + 1, b * 2)  # noqa: E731
    model = nxrt.jax.to_onnx(fn, [("B",), ("B",)], input_names=["const_0", "add_1"], output_names=["mul_2", "n_Add_3"])
    assert nxrt.jax.verify(fn, model, n=2, runtimes=("nxrt", "onnxruntime")).ok(1e-6)


def test_output_pytree_and_repeated_outputs():
    fn = lambda x: {"a": x, "b": (x * 2, x)}  # noqa: E731
    model, _ = check(fn, [("B", 2)])
    assert len(model.graph.output) == 3
