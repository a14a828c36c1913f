"""Eager ONNX ops: ``nxrt.ops.Add(a, b)``, ``nxrt.ops.Transpose(x, perm=[1, 0])``.

Each call runs a single-node model; models are built once per signature (op, domain, opset, input element
types and ranks, attributes) and cached, so repeated calls only pay for a run. Results are nxrt.Value objects.
Reserved keywords: ``_domain`` (default: the ONNX domain), ``_opset`` (default 21), ``_num_outputs`` (default 1).
"""

import numpy as np

from nxrt import _nxrt
from nxrt._nxrt import Value

DEFAULT_OPSET = 21

_sessions = {}
_ops = {}


def _freeze(value):
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(item) for item in value)
    if isinstance(value, (np.ndarray, Value)):
        array = np.asarray(value)
        return ("tensor", array.dtype.str, array.shape, array.tobytes())
    return (type(value).__name__, value)


def run_op(op_type, inputs, attributes, domain="", opset=None, num_outputs=1):
    """Runs one op on `inputs` (None marks an absent optional input) and returns its Value(s)."""
    opset = DEFAULT_OPSET if opset is None else int(opset)
    values = [None if item is None else item if isinstance(item, Value) else Value.from_object(item)
              for item in inputs]
    types = [0 if v is None else v.element_type for v in values]
    ranks = [-1 if v is None else v.ndim for v in values]
    key = (op_type, domain, opset, num_outputs, tuple(types), tuple(ranks),
           tuple(sorted((name, _freeze(value)) for name, value in attributes.items())))
    session = _sessions.get(key)
    if session is None:
        if not _nxrt.has_kernel(domain, op_type, opset):
            _nxrt._raise_status(9, f"Could not find an implementation for the op '{op_type}' in domain "
                                   f"'{domain or 'ai.onnx'}' (opset {opset})")
        model = _nxrt.make_op_model(op_type, domain, opset, types, ranks, num_outputs, dict(attributes))
        session = _nxrt.Session.create(model, 1)
        _sessions[key] = session
    feed = {f"input{i}": v for i, v in enumerate(values) if v is not None}
    results = session.run_values(None, feed, None)
    return results[0] if num_outputs == 1 else tuple(results)


class Op:
    """A callable for one op type: positional inputs, attributes as keywords."""

    def __init__(self, op_type, domain=""):
        self.op_type = op_type
        self.domain = domain
        self.__name__ = op_type
        self.__doc__ = f"Runs the ONNX op {op_type} eagerly and returns nxrt.Value(s)."

    def __call__(self, *inputs, _domain=None, _opset=None, _num_outputs=1, **attributes):
        domain = self.domain if _domain is None else _domain
        return run_op(self.op_type, inputs, attributes, domain, _opset, _num_outputs)

    def __repr__(self):
        return f"nxrt.ops.{self.op_type}"


def registered():
    """Names of the ops that have a kernel ('domain.Op' outside the ONNX domain)."""
    return list(_nxrt.registered_ops())


def __getattr__(name):
    if name.startswith("_"):
        raise AttributeError(name)
    op = _ops.get(name)
    if op is None:
        op = _ops[name] = Op(name)
    return op


def __dir__():
    return sorted(set(globals()) | {name for name in registered() if "." not in name})
