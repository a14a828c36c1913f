"""Models shared by the nxrt Python API tests, built with the onnx package."""

import importlib.util
import pathlib

import numpy as np
import onnx
from onnx import TensorProto, helper

ROOT = pathlib.Path(__file__).resolve().parents[2]


def load_bench_models():
    """bench/suite/models.py as a module (its build_all() gives every benchmark case)."""
    spec = importlib.util.spec_from_file_location("bench_suite_models", ROOT / "bench" / "suite" / "models.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def model_bytes(nodes, inputs, outputs, initializers=(), opset=21, ir_version=10, **model_kwargs):
    graph = helper.make_graph(nodes, "test_graph", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], **model_kwargs)
    model.ir_version = ir_version
    return model.SerializeToString()


def two_output_model():
    """x, y float [N, 3] -> sum = x + y, prod = x * y, rel = Relu(x - y)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])
    outs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, ["N", 3]) for name in ("sum", "prod", "rel")]
    nodes = [
        helper.make_node("Add", ["x", "y"], ["sum"]),
        helper.make_node("Mul", ["x", "y"], ["prod"]),
        helper.make_node("Sub", ["x", "y"], ["diff"]),
        helper.make_node("Relu", ["diff"], ["rel"]),
    ]
    return model_bytes(nodes, [x, y], outs, doc_string="two outputs", producer_name="nxrt-tests",
                       model_version=7)


def identity_model(elem_type, dims=("N",)):
    x = helper.make_tensor_value_info("x", elem_type, list(dims))
    y = helper.make_tensor_value_info("y", elem_type, list(dims))
    return model_bytes([helper.make_node("Identity", ["x"], ["y"])], [x], [y])


def mixed_dims_model():
    """x float [2, 'B', unknown] -> y = Relu(x) with a declared output shape."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, "B", None])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, "B", None])
    return model_bytes([helper.make_node("Relu", ["x"], ["y"])], [x], [y])


def overridable_initializer_model():
    """y = x + bias where bias is an initializer also listed as a graph input (overridable)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])
    bias_input = helper.make_tensor_value_info("bias", TensorProto.FLOAT, [3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])
    bias = onnx.numpy_helper.from_array(np.array([1, 2, 3], np.float32), "bias")
    return model_bytes([helper.make_node("Add", ["x", "bias"], ["y"])], [x, bias_input], [y], [bias])


def metadata_model():
    model = onnx.load_from_string(two_output_model())
    helper.set_model_props(model, {"author": "nxrt", "purpose": "tests"})
    model.domain = "ai.nxrt.test"
    model.graph.doc_string = "graph doc"
    return model.SerializeToString()


def onnxruntime_saturates_u8s8():
    """True when onnxruntime's uint8 x int8 integer products may be inexact on this CPU: without VNNI (AVX2, or
    AVX-512 without VNNI) its kernels add pairs of byte products in 16 bits (vpmaddubsw), which saturates. Tests
    compare nxrt with the exact result everywhere and with onnxruntime's uint8 x int8 results only where this is
    False."""
    try:
        flags = set(pathlib.Path("/proc/cpuinfo").read_text().split())
    except OSError:
        return True
    return not ({"avx512_vnni", "avx_vnni"} & flags)


def assert_requantized_equal(got, real, tie_window=1e-3, err_msg=""):
    """Checks quantized `got` against `real`, the exact value before rounding (integer accumulator times the
    float32 requantization multiplier, plus the zero point, in float64): `got` must be `real` rounded half to
    even and saturated to got's integer type. Where `real` is within `tie_window` of a half-integer, a runtime
    that multiplies in float32 may round to either neighbour, so both are accepted there and only there."""
    info = np.iinfo(got.dtype)
    real = np.asarray(real, np.float64)
    assert got.shape == real.shape, (got.shape, real.shape)
    nearest, below = np.rint(real), np.floor(real)
    expected = np.clip(nearest, info.min, info.max)
    near_tie = np.abs(real - below - 0.5) < tie_window
    other = np.clip(np.where(nearest == below, below + 1, below), info.min, info.max)
    values = got.astype(np.float64)
    ok = (values == expected) | (near_tie & (values == other))
    assert ok.all(), (f"{err_msg}: {int((~ok).sum())} of {ok.size} values differ from the exact rounding; first at "
                      f"{np.argwhere(~ok)[0].tolist()}: got {values[~ok][0]}, exact {real[~ok][0]!r}")


def one_node_model(op, feeds, outputs, attrs=None, domain="", constants=(), opsets=(("", 17), ("com.microsoft", 1))):
    """One-node model. `feeds` is an ordered list of (name, array or None): None is an omitted input, names in
    `constants` become initializers, the rest graph inputs. `outputs` holds one flag per node output (False: an
    omitted output)."""
    inputs, initializers, names = [], [], []
    for name, value in feeds:
        names.append(name if value is not None else "")
        if value is None:
            continue
        if name in constants:
            initializers.append(onnx.numpy_helper.from_array(value, name))
        else:
            inputs.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(value.dtype), value.shape))
    while names and names[-1] == "":
        names.pop()
    out_names = [f"out{i}" if keep else "" for i, keep in enumerate(outputs)]
    node = helper.make_node(op, names, out_names, domain=domain, **(attrs or {}))
    graph = helper.make_graph([node], "g", inputs, [onnx.ValueInfoProto(name=n) for n in out_names if n],
                              initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    model.ir_version = 8
    return model.SerializeToString()


def run_feeds(runtime, model, feeds, constants=()):
    """Runs `model` on the CPU provider of `runtime` (nxrt or onnxruntime) with the non-constant `feeds`."""
    session = runtime.InferenceSession(model, providers=["CPUExecutionProvider"])
    return session.run(None, {k: v for k, v in feeds if v is not None and k not in constants})


def run_with_caches_in_place(runtime, session, feeds, caches, outputs):
    """Runs `session` (of `runtime`: nxrt or onnxruntime) through IO binding with each cache input in one buffer
    that is also bound as its output (`caches`: input name -> output name), as kernels that update a cache in place
    require (onnxruntime's SparseAttention). `feeds`: name -> array (None: omitted; a cache feed is copied, the run
    overwrites its buffer). Returns the arrays of `outputs`, then each cache after the run."""
    binding = session.io_binding()
    copies, values = {}, {}  # an OrtValue made from an array does not keep the array alive
    for name, value in feeds.items():
        if value is None:
            continue
        if name in caches:
            copies[name] = value.copy()
            values[name] = runtime.OrtValue.ortvalue_from_numpy(copies[name])
            binding.bind_ortvalue_input(name, values[name])
        else:
            binding.bind_cpu_input(name, value)
    for name in outputs:
        binding.bind_output(name)
    for name, output in caches.items():
        binding.bind_ortvalue_output(output, values[name])
    session.run_with_iobinding(binding)
    return [*binding.copy_outputs_to_cpu()[:len(outputs)], *(values[name].numpy().copy() for name in caches)]


def assert_outputs_match(got, want, rtol=1e-5, atol=1e-5):
    """Output lists of two runtimes: same count and shapes; labels (integers, strings) equal; floats within rtol and
    atol times max(1, the largest |value| of the reference), NaN where the reference has NaN."""
    assert len(got) == len(want)
    for index, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, f"output {index}: shape {g.shape} vs {w.shape}"
        if w.dtype.kind in "iuOSU":
            np.testing.assert_array_equal(g, w, err_msg=f"output {index}")
        else:
            scale = max(1.0, float(np.nanmax(np.abs(w)))) if w.size and not np.all(np.isnan(w)) else 1.0
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol * scale, equal_nan=True, err_msg=f"output {index}")


def assert_maps_match(got, want, rtol=0.0, atol=0.0):
    """Map outputs of two runtimes: a dict, or a list of dicts (ZipMap's rows): the same keys in the same order, and
    values within rtol / atol (exactly equal by default; NaN where the reference has NaN)."""
    if isinstance(want, dict):
        got, want = [got], [want]
    assert isinstance(got, list) and len(got) == len(want)
    for row, (g, w) in enumerate(zip(got, want)):
        assert isinstance(g, dict) and list(g) == list(w), f"row {row}: keys {list(g)} != {list(w)}"
        np.testing.assert_allclose(list(g.values()), list(w.values()), rtol=rtol, atol=atol, err_msg=f"row {row}")
