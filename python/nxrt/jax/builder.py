"""GraphBuilder: the context primitive handlers emit ONNX nodes through.

One builder per ONNX graph body: the model's main graph, a subgraph of If/Loop, or the body of a named ONNX
function. The *root* of a builder is the main graph or the function body it belongs to; constants and the values
of symbolic dimensions live there, so a subgraph can use them from its enclosing scope and they are computed once.
"""

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from nxrt.jax.registry import UnsupportedPrimitiveError, handler_for

__all__ = ["DimValue", "GraphBuilder", "onnx_dtype", "source_of"]

try:
    from jax.extend.core import Literal as _Literal
except ImportError:  # older jax
    from jax.core import Literal as _Literal

_EXTRA_DTYPES = {"bfloat16": TensorProto.BFLOAT16}


def onnx_dtype(dtype):
    """The ONNX TensorProto element type of a numpy / JAX dtype."""
    dtype = np.dtype(dtype)
    if dtype.name in _EXTRA_DTYPES:
        return _EXTRA_DTYPES[dtype.name]
    return helper.np_dtype_to_tensor_dtype(dtype)


def is_symbolic(dim):
    return not isinstance(dim, (int, np.integer))


def dim_label(dim):
    """A dimension as ONNX shape metadata wants it: an int, or the symbolic expression's text (dim_param)."""
    return int(dim) if not is_symbolic(dim) else str(dim).replace(" ", "")


def source_of(eqn):
    """'file:line (function)' of the user code an equation came from, or ''."""
    try:
        from jax._src import source_info_util
        return source_info_util.summarize(eqn.source_info)
    except Exception:  # source info is best effort
        return ""


def _exclude_own_frames():
    """Keeps nxrt.jax's own frames (the traced wrapper in to_onnx) out of JAX's user source locations."""
    try:
        import os
        from jax._src import source_info_util
        source_info_util.register_exclusion(os.path.dirname(os.path.abspath(__file__)))
    except Exception:  # best effort: only affects error messages
        pass


_exclude_own_frames()


class DimValue:
    """An int64 tensor of shape [1] holding a dimension size; arithmetic on it emits ONNX nodes in the root.

    Symbolic dimension expressions (jax.export's _DimExpr) evaluate themselves over an environment of these.
    """

    __slots__ = ("root", "name")

    def __init__(self, root, name):
        self.root = root
        self.name = name

    def _name_of(self, other):
        return other.name if isinstance(other, DimValue) else self.root.ints([int(other)])

    def _binary(self, op_type, other, reverse=False):
        a, b = self.name, self._name_of(other)
        return DimValue(self.root, self.root.op(op_type, *((b, a) if reverse else (a, b))))

    def __add__(self, other):
        return self._binary("Add", other)

    def __radd__(self, other):
        return self._binary("Add", other, True)

    def __mul__(self, other):
        return self._binary("Mul", other)

    def __rmul__(self, other):
        return self._binary("Mul", other, True)

    def __sub__(self, other):
        return self._binary("Sub", other)

    def __rsub__(self, other):
        return self._binary("Sub", other, True)

    def __floordiv__(self, other):
        # Sizes are non-negative and divisors positive, so truncating Div equals floor division.
        return self._binary("Div", other)

    def __mod__(self, other):
        return self._binary("Mod", other)

    def __divmod__(self, other):
        return self // other, self % other

    def __rdivmod__(self, other):
        return self._binary("Div", other, True), self._binary("Mod", other, True)


class GraphBuilder:
    """Collects the nodes of one ONNX graph body; handlers call its methods to emit nodes."""

    def __init__(self, exporter, parent=None, function_inputs=None):
        self.exporter = exporter
        self.parent = parent
        self.root = self if parent is None else parent.root
        self.nodes = []
        self.is_function = function_inputs is not None
        if parent is None:
            self.initializers = []
            self.dim_sources = {}
            self._consts = {}
            self._dims = {}

    # ---- basics -----------------------------------------------------------------------------------------------

    @property
    def opset(self):
        return self.exporter.opset

    def fresh(self, prefix):
        return self.exporter.fresh(prefix)

    def op(self, op_type, *inputs, outputs=1, domain="", **attrs):
        """Appends a node; returns its output name, or a list of names when ``outputs`` != 1.

        ``outputs`` is a count or a list of names; None inputs become ONNX's empty (omitted) input; attributes
        whose value is None are left out.
        """
        names = [self.fresh(op_type.lower()) for _ in range(outputs)] if isinstance(outputs, int) else list(outputs)
        attrs = {k: v for k, v in attrs.items() if v is not None}
        node = helper.make_node(op_type, ["" if i is None else i for i in inputs], names,
                                name=self.fresh("n_" + op_type), domain=domain or None, **attrs)
        self.nodes.append(node)
        return names[0] if outputs == 1 else names

    def const(self, value, dtype=None):
        """Name of a constant holding ``value`` (array-like), made once per root and reused."""
        array = np.asarray(value, dtype=dtype)
        root = self.root
        key = (array.dtype.str, array.shape, array.tobytes())
        name = root._consts.get(key)
        if name is None:
            name = self.fresh("const")
            tensor = numpy_helper.from_array(array.copy(order="C"), name)
            if root.is_function:
                root.nodes.append(helper.make_node("Constant", [], [name], name=self.fresh("n_Constant"),
                                                   value=tensor))
            else:
                root.initializers.append(tensor)
            root._consts[key] = name
        return name

    def ints(self, values):
        """A 1-D int64 constant."""
        return self.const(np.asarray(list(values), dtype=np.int64).reshape(-1))

    def scalar(self, value, dtype):
        return self.const(np.asarray(value, dtype=dtype))

    # ---- dimensions ---------------------------------------------------------------------------------------------

    def dim(self, d):
        """Int64 [1] tensor with the size of dimension ``d`` (an int or a symbolic expression)."""
        if not is_symbolic(d):
            return self.ints([int(d)])
        root = self.root
        key = str(d)
        name = root._dims.get(key)
        if name is None:
            env = {}
            for var in d._get_vars():
                source = root.dim_sources.get(var)
                if source is None:
                    raise UnsupportedPrimitiveError(
                        "shape", detail=f"dimension '{var}' of expression '{d}' is not the size of an axis of any "
                                        "input of this graph or function")
                env[var] = DimValue(root, source())
            value = d._evaluate(env)
            name = value.name if isinstance(value, DimValue) else root.ints([int(value)])
            root._dims[key] = name
        return name

    def dim_scalar(self, d):
        """Int64 scalar tensor with the size of dimension ``d``."""
        if not is_symbolic(d):
            return self.scalar(int(d), np.int64)
        return self.root.op("Squeeze", self.dim(d), self.ints([0]))

    def shape(self, dims):
        """1-D int64 tensor for a shape whose entries are ints or symbolic expressions."""
        dims = tuple(dims)
        if not any(is_symbolic(d) for d in dims):
            return self.ints([int(d) for d in dims])
        root = self.root
        key = ("shape", tuple(str(d) for d in dims))
        name = root._dims.get(key)
        if name is None:
            parts, run = [], []
            for d in dims:
                if is_symbolic(d):
                    if run:
                        parts.append(self.ints(run))
                        run = []
                    parts.append(self.dim(d))
                else:
                    run.append(int(d))
            if run:
                parts.append(self.ints(run))
            name = root.op("Concat", *parts, axis=0) if len(parts) > 1 else parts[0]
            root._dims[key] = name
        return name

    # ---- common node patterns -----------------------------------------------------------------------------------

    def cast(self, x, dtype):
        return self.op("Cast", x, to=onnx_dtype(dtype))

    def reshape(self, x, dims):
        return self.op("Reshape", x, self.shape(dims))

    def transpose(self, x, perm):
        perm = [int(p) for p in perm]
        return x if perm == list(range(len(perm))) else self.op("Transpose", x, perm=perm)

    def unsqueeze(self, x, axes):
        return self.op("Unsqueeze", x, self.ints(axes)) if len(axes) else x

    def squeeze(self, x, axes):
        return self.op("Squeeze", x, self.ints(axes)) if len(axes) else x

    def expand(self, x, dims):
        return self.op("Expand", x, self.shape(dims))

    def slice(self, x, starts, ends, axes, steps=None):
        args = [x, self.ints(starts), self.ints(ends), self.ints(axes)]
        if steps is not None:
            args.append(self.ints(steps))
        return self.op("Slice", *args)

    def zeros(self, dims, dtype, fill=0):
        """A tensor of ``dims`` filled with ``fill``."""
        return self.expand(self.scalar(fill, dtype), dims)

    # ---- jaxprs -------------------------------------------------------------------------------------------------

    def lower(self, jaxpr, args, consts=()):
        """Emits the equations of ``jaxpr`` (a Jaxpr or ClosedJaxpr) inline; returns its output names."""
        if hasattr(jaxpr, "consts") and hasattr(jaxpr, "jaxpr"):
            consts = list(jaxpr.consts)
            jaxpr = jaxpr.jaxpr
        env = {}

        def read(var):
            if isinstance(var, _Literal):
                return self.const(np.asarray(var.val, dtype=var.aval.dtype))
            return env[var]

        for var, value in zip(jaxpr.constvars, consts):
            env[var] = value if isinstance(value, str) else self.const(np.asarray(value))
        for var, name in zip(jaxpr.invars, args):
            env[var] = name
        for eqn in jaxpr.eqns:
            name = eqn.primitive.name
            handler = handler_for(name)
            if handler is None:
                raise UnsupportedPrimitiveError(name, where=source_of(eqn))
            try:
                outs = handler(self, eqn, *[read(v) for v in eqn.invars])
            except UnsupportedPrimitiveError as error:
                if not error.where:
                    raise UnsupportedPrimitiveError(error.primitive, source_of(eqn), error.detail) from None
                raise
            outs = [outs] if isinstance(outs, str) else list(outs)
            if len(outs) != len(eqn.outvars):
                raise RuntimeError(f"nxrt.jax: handler for '{name}' returned {len(outs)} outputs, "
                                   f"the equation has {len(eqn.outvars)}")
            for var, out in zip(eqn.outvars, outs):
                env[var] = out
        return [read(v) for v in jaxpr.outvars]

    def subgraph(self, name, inputs, body, output_avals):
        """A GraphProto for If/Loop/Scan bodies.

        ``inputs`` is a list of (name, dtype, dims); ``body(builder)`` emits the nodes and returns output names,
        which are renamed (through Identity) to fresh names typed with ``output_avals``.
        """
        child = GraphBuilder(self.exporter, parent=self)
        outs = body(child)
        out_names = []
        for out in outs:
            fresh = self.fresh(name + "_out")
            child.op("Identity", out, outputs=[fresh])
            out_names.append(fresh)
        graph_inputs = [value_info(n, dtype, dims) for n, dtype, dims in inputs]
        graph_outputs = [value_info(n, a.dtype, a.shape) for n, a in zip(out_names, output_avals)]
        return helper.make_graph(child.nodes, self.fresh(name), graph_inputs, graph_outputs)


class Aval:
    """The dtype and shape of a subgraph output, where no JAX aval describes it."""

    def __init__(self, dtype, shape):
        self.dtype = np.dtype(dtype)
        self.shape = tuple(shape)


def value_info(name, dtype, dims):
    return helper.make_tensor_value_info(name, onnx_dtype(dtype), [dim_label(d) for d in dims])

