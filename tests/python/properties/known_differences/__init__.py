"""Cases where onnx.reference.ReferenceEvaluator is wrong, each with the reason, and what the property tests
compare nxrt against there instead. The spec decides; where it is silent the reference does, unless its result is
a documented bug of the reference (listed here). onnxruntime's answer for the same case is noted beside it.

The entries live in one module per area (elementwise, reductions, linalg_quantize, ...), each with its helpers
and its own DIFFERENCES list; this module joins the lists. expected_for takes the first entry whose op and
predicate match, so all entries of one op stay in one area module, in the order that decides between them."""

from . import (attention_training, control_flow, data_movement, elementwise, linalg_quantize, ml, normalization,
               pool_conv, recurrent, reductions, resize, signal_image, strings)
from .common import Difference
from .normalization import batch_norm_by_the_spec, lp_norm_by_the_spec, mvn_by_the_spec
from .recurrent import recurrent_rounding_atol
from .reductions import saturated

__all__ = ["DIFFERENCES", "Difference", "KERNEL_ATOL", "batch_norm_by_the_spec", "expected_for", "kernel_atol",
           "lp_norm_by_the_spec", "mvn_by_the_spec", "recurrent_rounding_atol", "saturated"]

_AREAS = (elementwise, reductions, data_movement, control_flow, linalg_quantize, ml, signal_image, strings,
          normalization, pool_conv, recurrent, resize, attention_training)


def _joined(areas):
    """The areas' entries in order; fails when one op has entries in two areas (their order would then depend on
    the order of the areas, not on one list)."""
    owner = {}
    for area in areas:
        for difference in area.DIFFERENCES:
            if owner.setdefault(difference.op, area) is not area:
                raise AssertionError(f"{difference.op} has entries in {owner[difference.op].__name__} and "
                                     f"{area.__name__}")
    return [difference for area in areas for difference in area.DIFFERENCES]


DIFFERENCES = _joined(_AREAS)


# nxrt's own documented accuracy where it is stated in absolute terms: (op, dtype name) -> (atol, reason).
KERNEL_ATOL = {
    ("Gelu", "float32"): (
        2.5e-7,
        "nxrt's float32 Gelu (erf form) evaluates x / (1 + 2^y) with a polynomial y, accurate to 2e-7 absolute or 3 "
        "ulp (ep/cpu/microkernels/vector_math_coefficients.h): for x < -2.5 the result is below 0.016 and the "
        "absolute bound is the looser one (Gelu(-3) = -0.00404975 against -0.00404969). onnxruntime's float32 Gelu "
        "is of the same absolute accuracy.",
    ),
}


def kernel_atol(op, dtype):
    return KERNEL_ATOL.get((op, str(dtype)), (0.0, ""))[0]


def expected_for(op, opset, inputs, attrs):
    """The replacement oracle for this case, or None when the reference is right."""
    for difference in DIFFERENCES:
        if difference.op == op and difference.applies(opset, inputs, attrs):
            return lambda inputs, attrs, d=difference: d.expected(op, opset, inputs, attrs)
    return None
