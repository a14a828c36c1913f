"""nxrt against the official onnx package: models built with onnx.helper run through the nxrt CLI and match
onnx.reference.ReferenceEvaluator; the models nxrt writes pass onnx.checker."""
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

OPSET = 21
rng = np.random.default_rng(0)


def make_model(nodes, inputs, outputs, initializers=(), opset=OPSET):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    return model


def check_against_reference(model, inputs, run_model, tmp_path, rtol=1e-5, atol=1e-6, save_kwargs=None):
    expected = ReferenceEvaluator(model).run(None, inputs)
    path = tmp_path / "model.onnx"
    onnx.save_model(model, path, **(save_kwargs or {}))  # may move initializers out of `model`
    got = run_model(path, inputs)
    for info, want in zip(model.graph.output, expected):
        have = got[info.name]
        assert have.dtype == want.dtype, info.name
        assert have.shape == want.shape, info.name
        if np.issubdtype(want.dtype, np.integer) or want.dtype == np.bool_:
            np.testing.assert_array_equal(have, want, err_msg=info.name)  # exact types compare exactly
        else:
            np.testing.assert_allclose(have, want, rtol=rtol, atol=atol)


def tensor_info(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


NUMPY_TO_ONNX = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE, np.int32: TensorProto.INT32,
                 np.int64: TensorProto.INT64, np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8}


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_binary_broadcast(op, dtype, run_model, tmp_path):
    a = (rng.standard_normal((2, 3, 4)) * 10).astype(dtype)
    b = (rng.standard_normal((3, 1)) * 10).astype(dtype)
    if np.issubdtype(dtype, np.integer):
        b[b == 0] = 3
    et = NUMPY_TO_ONNX[dtype]
    model = make_model([helper.make_node(op, ["a", "b"], ["c"])],
                       [tensor_info("a", et, ["N", 3, 4]), tensor_info("b", et, [3, 1])],
                       [tensor_info("c", et, ["N", 3, 4])])
    check_against_reference(model, {"a": a, "b": b}, run_model, tmp_path)


@pytest.mark.parametrize("op", ["Relu", "Sigmoid", "Tanh", "Identity"])
def test_unary(op, run_model, tmp_path):
    x = (rng.standard_normal((5, 7)) * 4).astype(np.float32)
    model = make_model([helper.make_node(op, ["x"], ["y"])], [tensor_info("x", TensorProto.FLOAT, [5, 7])],
                       [tensor_info("y", TensorProto.FLOAT, [5, 7])])
    check_against_reference(model, {"x": x}, run_model, tmp_path)


@pytest.mark.parametrize("shapes", [((3, 4), (4, 5)), ((2, 3, 4), (4, 6)), ((4,), (2, 4, 3)), ((5, 1, 3, 8), (2, 8, 7))])
def test_matmul(shapes, run_model, tmp_path):
    a = rng.standard_normal(shapes[0]).astype(np.float32)
    b = rng.standard_normal(shapes[1]).astype(np.float32)
    model = make_model([helper.make_node("MatMul", ["a", "b"], ["c"])],
                       [tensor_info("a", TensorProto.FLOAT, list(shapes[0])),
                        tensor_info("b", TensorProto.FLOAT, list(shapes[1]))],
                       [tensor_info("c", TensorProto.FLOAT, list(np.matmul(a, b).shape))])
    check_against_reference(model, {"a": a, "b": b}, run_model, tmp_path, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("trans_a,trans_b", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_gemm_with_initializers(trans_a, trans_b, run_model, tmp_path):
    a = rng.standard_normal((6, 5) if trans_a else (5, 6))
    w = rng.standard_normal((7, 6) if trans_b else (6, 7))
    c = rng.standard_normal((7,))
    node = helper.make_node("Gemm", ["a", "w", "c"], ["y"], alpha=0.5, beta=2.0, transA=trans_a, transB=trans_b)
    model = make_model([node], [tensor_info("a", TensorProto.DOUBLE, list(a.shape))],
                       [tensor_info("y", TensorProto.DOUBLE, [5, 7])],
                       [numpy_helper.from_array(w, "w"), numpy_helper.from_array(c, "c")])
    check_against_reference(model, {"a": a}, run_model, tmp_path, rtol=1e-10, atol=1e-12)


def test_reshape_transpose_cast_constant(run_model, tmp_path):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    nodes = [
        helper.make_node("Constant", [], ["shape"], value=numpy_helper.from_array(np.array([0, -1], np.int64))),
        helper.make_node("Reshape", ["x", "shape"], ["r"]),
        helper.make_node("Transpose", ["r"], ["t"], perm=[1, 0]),
        helper.make_node("Cast", ["t"], ["y"], to=TensorProto.DOUBLE),
    ]
    model = make_model(nodes, [tensor_info("x", TensorProto.FLOAT, [2, 3, 4])],
                       [tensor_info("y", TensorProto.DOUBLE, [12, 2])])
    check_against_reference(model, {"x": x}, run_model, tmp_path)


def test_external_data_is_loaded(run_model, tmp_path):
    w = rng.standard_normal((64, 32)).astype(np.float32)
    x = rng.standard_normal((3, 64)).astype(np.float32)
    model = make_model([helper.make_node("MatMul", ["x", "w"], ["y"])], [tensor_info("x", TensorProto.FLOAT, ["B", 64])],
                       [tensor_info("y", TensorProto.FLOAT, ["B", 32])], [numpy_helper.from_array(w, "w")])
    check_against_reference(model, {"x": x}, run_model, tmp_path, rtol=1e-4, atol=1e-5,
                            save_kwargs=dict(save_as_external_data=True, all_tensors_to_one_file=True,
                                             location="weights.bin", size_threshold=0))
    assert (tmp_path / "weights.bin").stat().st_size == w.nbytes


@pytest.mark.parametrize("name", ["simple_add", "mlp"])
def test_builtin_models_pass_the_onnx_checker(name, nxrt_cli, run_model, tmp_path):
    path = tmp_path / f"{name}.onnx"
    done = subprocess.run([str(nxrt_cli), "export-builtin", name, str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    inputs = {}
    for info in model.graph.input:
        shape = [d.dim_value if d.HasField("dim_value") else 3 for d in info.type.tensor_type.shape.dim]
        inputs[info.name] = rng.standard_normal(shape).astype(np.float32)
    expected = ReferenceEvaluator(model).run(None, inputs)
    got = run_model(path, inputs)
    for info, want in zip(model.graph.output, expected):
        np.testing.assert_allclose(got[info.name], want, rtol=1e-5, atol=1e-6)


def test_bad_model_reports_error(nxrt_cli, tmp_path):
    path = tmp_path / "bad.onnx"
    path.write_bytes(b"\x0a\xff\xff\xff\xff\x0fgarbage")
    done = subprocess.run([str(nxrt_cli), "run", str(path)], capture_output=True, text=True)
    assert done.returncode == 1
    assert "INVALID_PROTOBUF" in done.stdout + done.stderr
