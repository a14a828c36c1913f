"""nxrt.ops: every registered op callable eagerly, with attributes, returning nxrt.Value."""

import numpy as np
import pytest

import nxrt
from nxrt import ops
from nxrt.capi.onnxruntime_pybind11_state import InvalidArgument, NotImplemented as NotImplementedOp

A = np.array([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]], np.float32)
B = np.array([[0.5, 1.0, 2.0], [1.0, -1.0, 0.5]], np.float32)


def test_binary_and_unary_ops_match_numpy():
    np.testing.assert_array_equal(np.asarray(ops.Add(A, B)), A + B)
    np.testing.assert_array_equal(np.asarray(ops.Sub(A, B)), A - B)
    np.testing.assert_array_equal(np.asarray(ops.Mul(A, B)), A * B)
    np.testing.assert_array_equal(np.asarray(ops.Div(A, B)), A / B)
    np.testing.assert_array_equal(np.asarray(ops.Relu(A)), np.maximum(A, 0))
    np.testing.assert_allclose(np.asarray(ops.Sigmoid(A)), 1 / (1 + np.exp(-A)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ops.Tanh(A)), np.tanh(A), rtol=1e-6)


def test_results_are_values_and_chain():
    total = ops.Add(A, B)
    assert isinstance(total, nxrt.Value)
    chained = ops.Relu(ops.Mul(total, total))
    np.testing.assert_array_equal(chained.numpy(), (A + B) ** 2)
    np.testing.assert_array_equal(np.asarray(ops.Add(np.int64(3), np.arange(3))), [3, 4, 5])


def test_attributes_as_keywords():
    np.testing.assert_array_equal(ops.Transpose(A, perm=[1, 0]).numpy(), A.T)
    gemm = ops.Gemm(A, B, None, transB=1, alpha=2.0)
    np.testing.assert_allclose(gemm.numpy(), 2.0 * A @ B.T, rtol=1e-6)
    np.testing.assert_array_equal(ops.Cast(A, to=7).numpy(), A.astype(np.int64))
    shape = np.array([3, 2], np.int64)
    np.testing.assert_array_equal(ops.Reshape(A, shape).numpy(), A.reshape(3, 2))
    np.testing.assert_allclose(ops.MatMul(A, B.T).numpy(), A @ B.T, rtol=1e-6)
    np.testing.assert_array_equal(ops.Identity(A).numpy(), A)


def test_sessions_are_cached_per_signature():
    ops._sessions.clear()
    ops.Add(A, B)
    ops.Add(A * 2, B)
    ops.Add(A[:1], B[:1])  # same rank: symbolic dims serve every shape
    assert len(ops._sessions) == 1
    ops.Add(A.astype(np.float64), B.astype(np.float64))
    ops.Transpose(A, perm=[1, 0])
    ops.Transpose(A, perm=[0, 1])
    assert len(ops._sessions) == 4


def test_unknown_op_raises_not_implemented_naming_op_and_domain():
    with pytest.raises(NotImplementedOp, match=r"'FancyOp' in domain 'ai.onnx'"):
        ops.FancyOp(A)
    with pytest.raises(NotImplementedOp, match=r"'Add' in domain 'com.example'"):
        ops.Add(A, B, _domain="com.example")


def test_bad_inputs_surface_engine_errors():
    with pytest.raises(InvalidArgument):
        ops.Add(A, np.ones((4, 5), np.float32))


def test_every_registered_op_is_listed_and_callable():
    names = ops.registered()
    for expected in ("Add", "Relu", "MatMul", "Gemm", "Transpose", "Cast", "Reshape"):
        assert expected in names
    for name in names:
        if "." not in name:
            assert callable(getattr(ops, name)) and name in dir(ops)
