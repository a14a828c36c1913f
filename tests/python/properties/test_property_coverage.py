"""Coverage of the property suite: every operator nxrt registers has a property test, or is listed in PENDING
below, which may only shrink. A kernel added without a property test fails here; so does a covered op still
listed as pending. nxrt's own fused ops (com.nxrt.*) only come from its optimizer, never from a model file, and
are checked through the ops they replace."""

import importlib
import pathlib

import nxrt._nxrt as native

# Every property module (test_*_properties.py beside this file) names the ops it tests in COVERED.
MODULES = sorted(path.stem for path in pathlib.Path(__file__).parent.glob("test_*_properties.py"))
COVERED = set().union(*(importlib.import_module(name).COVERED for name in MODULES))

# Registered ops without a property test yet (domain-qualified outside ai.onnx).
PENDING = set()


def registered():
    return {op for op in native.registered_ops() if not op.startswith("com.nxrt.")}


def test_every_registered_op_has_a_property_test_or_is_pending():
    missing = registered() - COVERED - PENDING
    assert not missing, f"ops without a property test (add one, or list them in PENDING): {sorted(missing)}"


def test_pending_lists_only_registered_ops_without_a_test():
    assert not PENDING & COVERED, f"covered ops still listed as pending: {sorted(PENDING & COVERED)}"
    assert PENDING <= registered(), f"pending ops nxrt does not register: {sorted(PENDING - registered())}"
    assert COVERED <= registered(), f"tested ops nxrt does not register: {sorted(COVERED - registered())}"
