"""Generator, selection and layout operators on generated inputs (Shape, Size, Constant in each value form,
ConstantOfShape, EyeLike, Range, NonZero, OneHot, TopK, Unique, Compress, CumProd, DepthToSpace, SpaceToDepth,
ReverseSequence, CenterCropPad), at every opset version where their schema changed (from 7) and every dtype of
their type constraints, strings included, against the ONNX reference (known_differences/ where it is wrong)."""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from onnx import numpy_helper

import known_differences
from property_harness import (SETTINGS, allowed_dtypes, assert_same, check_node, describe, elem_type, node_model,
                              op_cases, run_nxrt, run_reference, scaled, versions)
from property_values import arrays, elements, is_float, shapes


# Kernels that move or write elements without arithmetic on them (copies, shape reads, NonZero's test against zero,
# EyeLike's ones: one path per element size, plus strings) run each (opset, dtype) case on fewer examples: the op's
# logic gets them over all its cases together, and the suite stays in its CI budget. Ops that compare or combine
# values keep SETTINGS.
COPY_SETTINGS = scaled(5, 2)
# Ops that compare or combine values over many (opset, dtype) cases: half the examples a case, still hundreds an op.
MANY_CASES_SETTINGS = scaled(2, 4)


def check(op, opset, inputs, attrs=None, outputs=1):
    """check_node with the known_differences/ oracle where the reference is wrong for this case."""
    check_node(op, opset, inputs, attrs, outputs=outputs,
               expected=known_differences.expected_for(op, opset, inputs, attrs or {}))


@pytest.mark.parametrize("op, opset, dtype", list(op_cases(["Shape", "Size"])))
@COPY_SETTINGS
@given(data=st.data())
def test_shape_and_size_match_the_reference(op, opset, dtype, data):
    # Shape and Size read no element: any filling serves (drawing the values would only cost time).
    x = np.full(data.draw(shapes(max_rank=5, max_side=3), label="shape"), "" if dtype == object else 0, dtype)
    attrs = {}
    if op == "Shape" and opset >= 15:  # start / end: negative, out of range (clamped to [0, rank]) or absent
        bound = st.one_of(st.none(), st.integers(-x.ndim - 2, x.ndim + 2))
        for name in ("start", "end"):
            value = data.draw(bound, label=name)
            if value is not None:
                attrs[name] = value
    check(op, opset, [x], attrs)


@pytest.mark.parametrize("opset, dtype", list(op_cases("Constant", with_op=False)))
@COPY_SETTINGS
@given(data=st.data())
def test_constant_value_tensor_matches_the_reference(opset, dtype, data):
    value = data.draw(arrays(dtype, shapes(max_rank=3)), label="value")
    check("Constant", opset, [], {"value": numpy_helper.from_array(value, "value")})


def text_without_trailing_nul():
    # numpy's fixed-width unicode arrays, in which the reference returns value_string(s), drop trailing NULs.
    return elements(np.dtype(object)).filter(lambda s: not s.endswith("\0"))


# The scalar and list attribute forms exist from opset 12.
@pytest.mark.parametrize("opset", versions("Constant", first=12))
@pytest.mark.parametrize("form", ["value_float", "value_floats", "value_int", "value_ints", "value_string",
                                  "value_strings"])
@COPY_SETTINGS
@given(data=st.data())
def test_constant_attribute_forms_match_the_reference(opset, form, data):
    scalar = {"value_float": elements(np.float32), "value_int": st.integers(-2 ** 63, 2 ** 63 - 1),
              "value_string": text_without_trailing_nul()}
    single = scalar[form.rstrip("s")]
    if form.endswith("s"):
        values = data.draw(st.lists(single, min_size=1, max_size=5), label=form)
    else:
        values = data.draw(single, label=form)
    check("Constant", opset, [], {form: values})


@pytest.mark.parametrize("opset, dtype", list(op_cases("ConstantOfShape", type_param="T2", with_op=False)))
@COPY_SETTINGS
@given(data=st.data())
def test_constant_of_shape_matches_the_reference(opset, dtype, data):
    shape = np.array(data.draw(shapes(max_rank=4), label="shape"), np.int64)
    attrs = {}
    # Without `value` the output is float32 zeros; the float32 case covers that form.
    if dtype != np.float32 or data.draw(st.booleans(), label="has value"):
        value = data.draw(arrays(dtype, (1,)), label="value")
        attrs["value"] = numpy_helper.from_array(value, "value")
    check("ConstantOfShape", opset, [shape], attrs)


@pytest.mark.parametrize("opset, dtype", list(op_cases("EyeLike", type_param="T1", with_op=False)))
@COPY_SETTINGS
@given(data=st.data())
def test_eye_like_matches_the_reference(opset, dtype, data):
    x = data.draw(arrays(dtype, shapes(min_rank=2, max_rank=2)), label="x")
    attrs = {"k": data.draw(st.integers(-5, 5), label="k")}
    out_type = data.draw(st.one_of(st.none(), st.sampled_from(allowed_dtypes("EyeLike", opset, "T2"))),
                         label="dtype")
    if out_type is not None:
        attrs["dtype"] = elem_type(out_type)
    check("EyeLike", opset, [x], attrs)


@pytest.mark.parametrize("opset, dtype", list(op_cases("Range", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_range_matches_the_reference(opset, dtype, data):
    # Finite values (the count ceil((limit - start) / delta) has none for NaN or infinities); the limit mostly a
    # few steps from the start (a short range from any start, the type's extremes included), else any value.
    value = elements(dtype).filter(np.isfinite) if is_float(dtype) else elements(dtype)
    start = data.draw(value, label="start")
    delta = data.draw(value.filter(lambda v: v != 0), label="delta")  # the spec has no count for delta 0
    with np.errstate(all="ignore"):
        near = st.integers(-3, 64).map(lambda n: np.array(start + n * delta + delta / 2, np.float64))
        if not is_float(dtype):
            info = np.iinfo(dtype)
            near = st.integers(-3, 64).map(lambda n: min(max(int(start) + n * int(delta), int(info.min)),
                                                         int(info.max)))
        limit = data.draw(st.one_of(near, near, value), label="limit")
        start, limit, delta = (np.array(v).astype(dtype) for v in (start, limit, delta))
    wide = [float(v) for v in (start, limit, delta)]
    # At most 64 elements, so huge magnitudes do not run long; and a count of at least -64: numpy.arange (the
    # reference) fails on a huge negative count ("Maximum allowed size exceeded") instead of giving no element.
    assume(np.isfinite(wide[1]) and abs(np.ceil((wide[1] - wide[0]) / wide[2])) <= 64)
    check("Range", opset, [start, limit, delta])


@pytest.mark.parametrize("opset, dtype", list(op_cases("NonZero", with_op=False)))
@COPY_SETTINGS
@given(data=st.data())
def test_non_zero_matches_the_reference(opset, dtype, data):
    x = data.draw(arrays(dtype, shapes(max_rank=4)), label="x")
    check("NonZero", opset, [x])


@pytest.mark.parametrize("opset, dtype", list(op_cases("OneHot", type_param="T3", with_op=False)))
@MANY_CASES_SETTINGS
@given(data=st.data())
def test_one_hot_matches_the_reference(opset, dtype, data):
    depth_type = data.draw(st.sampled_from(allowed_dtypes("OneHot", opset, "T2")), label="depth type")
    index_type = data.draw(st.sampled_from(allowed_dtypes("OneHot", opset, "T1")), label="index type")
    depth_value = data.draw(st.integers(1, 5), label="depth")
    if is_float(depth_type) and data.draw(st.booleans(), label="fractional depth"):
        depth_value += 0.5  # the spec casts a non-integer depth to int64
    # "Scalar or rank 1 tensor containing exactly one element".
    depth = np.array(depth_value, depth_type).reshape(data.draw(st.sampled_from([(), (1,)]), label="depth shape"))
    low = -depth_value - 2 if np.dtype(index_type).kind != "u" else 0
    # In range, negative (from opset 11: counted from the back) and out of range (all off); fractional float
    # indices are cast to int64. NaN and infinities have no int64 value.
    index_values = st.integers(int(low), int(depth_value) + 2)
    if is_float(index_type):
        index_values = st.one_of(index_values, st.floats(low, depth_value + 2).map(lambda v: round(v, 1)))
    indices = data.draw(arrays(index_type, shapes(max_rank=3), index_values), label="indices")
    values = data.draw(arrays(dtype, (2,)), label="values")
    attrs = {}
    if data.draw(st.booleans(), label="has axis"):
        attrs["axis"] = data.draw(st.integers(-indices.ndim - 1, indices.ndim), label="axis")
    check("OneHot", opset, [indices, depth, values], attrs)


def by_index(values, indices, axis):
    """TopK results reordered along `axis` by their indices: the order sorted=0 leaves undefined."""
    order = np.argsort(indices, axis=axis, kind="stable")
    return [np.take_along_axis(values, order, axis), np.take_along_axis(indices, order, axis)]


@pytest.mark.parametrize("opset, dtype", list(op_cases("TopK", with_op=False)))
@MANY_CASES_SETTINGS
@given(data=st.data())
def test_top_k_matches_the_reference(opset, dtype, data):
    # Values from a few distinct ones, so ties (which the spec orders by lower index first) are common.
    pool = data.draw(st.lists(elements(dtype), min_size=1, max_size=4), label="value pool")
    x = data.draw(arrays(dtype, shapes(min_rank=1), st.sampled_from(pool)), label="x")
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    dim = x.shape[axis]
    assume(dim > 0)  # K must be positive and at most the axis' size
    k = data.draw(st.integers(1, dim), label="k")
    attrs = {"axis": axis}
    if opset < 10:
        attrs["k"] = k
        inputs = [x]
    else:
        inputs = [x, np.array([k], np.int64)]
    if opset >= 11:
        attrs["largest"] = data.draw(st.integers(0, 1), label="largest")
        attrs["sorted"] = data.draw(st.integers(0, 1), label="sorted")
    model = node_model("TopK", opset, inputs, attrs, outputs=2)
    expected = run_reference(model, inputs)
    actual = run_nxrt(model, inputs)
    if attrs.get("sorted", 1) == 0:
        expected, actual = by_index(*expected, axis), by_index(*actual, axis)
    assert_same(actual, expected, describe("TopK", opset, inputs, attrs))


@pytest.mark.parametrize("opset, dtype", list(op_cases("Unique", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_unique_matches_the_reference(opset, dtype, data):
    pool = data.draw(st.lists(elements(dtype), min_size=1, max_size=4), label="value pool")
    x = data.draw(arrays(dtype, shapes(max_rank=3), st.sampled_from(pool)), label="x")
    attrs = {"sorted": data.draw(st.integers(0, 1), label="sorted")}
    if x.ndim and data.draw(st.booleans(), label="has axis"):
        attrs["axis"] = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    check("Unique", opset, [x], attrs, outputs=4)


@pytest.mark.parametrize("opset, dtype", list(op_cases("Compress", with_op=False)))
@COPY_SETTINGS
@given(data=st.data())
def test_compress_matches_the_reference(opset, dtype, data):
    x = data.draw(arrays(dtype, shapes(min_rank=1)), label="x")
    attrs = {}
    length = x.size
    if data.draw(st.booleans(), label="has axis"):
        low = -x.ndim if opset >= 11 else 0  # negative axes from opset 11
        attrs["axis"] = data.draw(st.integers(low, x.ndim - 1), label="axis")
        length = x.shape[attrs["axis"]]
    # The condition may be shorter than the axis (or the flattened input): what lies past it is dropped.
    condition = data.draw(arrays(np.bool_, (data.draw(st.integers(0, length), label="length"),)), label="condition")
    check("Compress", opset, [x, condition], attrs)


@pytest.mark.parametrize("opset, dtype", list(op_cases("CumProd", with_op=False)))
@SETTINGS
@given(data=st.data())
def test_cumprod_matches_the_reference(opset, dtype, data):
    x = data.draw(arrays(dtype, shapes(min_rank=1)), label="x")
    axis_type = data.draw(st.sampled_from(allowed_dtypes("CumProd", opset, "T2")), label="axis type")
    axis = np.array(data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis"), axis_type)
    attrs = {"exclusive": data.draw(st.integers(0, 1), label="exclusive"),
             "reverse": data.draw(st.integers(0, 1), label="reverse")}
    check_node("CumProd", opset, [x, axis], attrs, half_in_float=True)


@pytest.mark.parametrize("op, opset, dtype", list(op_cases(["DepthToSpace", "SpaceToDepth"])))
@COPY_SETTINGS
@given(data=st.data())
def test_depth_space_rearrangements_match_the_reference(op, opset, dtype, data):
    block = data.draw(st.integers(1, 3), label="blocksize")
    batch, channels, height, width = (data.draw(st.integers(0, 2), label=name) for name in "nchw")
    if op == "DepthToSpace":
        shape = (batch, channels * block * block, height, width)
    else:
        shape = (batch, channels, height * block, width * block)
    x = data.draw(arrays(dtype, shape), label="x")
    attrs = {"blocksize": block}
    # CRD (column-row-depth) from DepthToSpace-11 and SpaceToDepth-28; DCR is the default.
    if opset >= (11 if op == "DepthToSpace" else 28):
        attrs["mode"] = data.draw(st.sampled_from(["DCR", "CRD"]), label="mode")
    check(op, opset, [x], attrs)


@pytest.mark.parametrize("opset, dtype", list(op_cases("ReverseSequence", with_op=False)))
@COPY_SETTINGS
@given(data=st.data())
def test_reverse_sequence_matches_the_reference(opset, dtype, data):
    x = data.draw(arrays(dtype, shapes(min_rank=2)), label="x")
    batch_axis = data.draw(st.integers(0, 1), label="batch_axis")
    time_axis = 1 - batch_axis
    steps = x.shape[time_axis]
    lengths = data.draw(arrays(np.int64, (x.shape[batch_axis],), st.integers(0, steps)), label="sequence_lens")
    check("ReverseSequence", opset, [x, lengths], {"batch_axis": batch_axis, "time_axis": time_axis})


def center_crop_pad_case(opset, dtype, data):
    x = data.draw(arrays(dtype, shapes(min_rank=1)), label="x")
    attrs = {}
    axes = list(range(x.ndim))
    if data.draw(st.booleans(), label="has axes"):
        axes = data.draw(st.lists(st.integers(-x.ndim, x.ndim - 1), unique_by=lambda a: a % x.ndim, min_size=1,
                                  max_size=x.ndim), label="axes")
        attrs["axes"] = axes
    shape_type = data.draw(st.sampled_from(allowed_dtypes("CenterCropPad", opset, "Tind")), label="shape type")
    target = np.array([data.draw(st.integers(0, 6), label="side") for _ in axes], shape_type)
    check("CenterCropPad", opset, [x, target], attrs)


@pytest.mark.parametrize("opset, dtype", op_cases("CenterCropPad", with_op=False))
@COPY_SETTINGS
@given(data=st.data())
def test_center_crop_pad_matches_the_reference(opset, dtype, data):
    center_crop_pad_case(opset, dtype, data)


COVERED = {"Shape", "Size", "Constant", "ConstantOfShape", "EyeLike", "Range", "NonZero", "OneHot", "TopK", "Unique",
           "Compress", "CumProd", "DepthToSpace", "SpaceToDepth", "ReverseSequence", "CenterCropPad"}
