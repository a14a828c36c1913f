"""to_onnx: trace a JAX callable to a jaxpr (symbolic shapes allowed) and lower it to an ONNX model."""

import contextlib
import inspect
import itertools

import numpy as np
import onnx
from onnx import helper

from nxrt.jax.builder import GraphBuilder, is_symbolic, value_info
from nxrt.jax.functions import FUNCTION_DOMAIN
from nxrt.jax.native_layers import native_layers

__all__ = ["to_onnx", "input_specs", "x64_mode"]

MIN_OPSET = 18
DOUBLE_PRECISION_KEY = "nxrt.jax.enable_double_precision"


class Exporter:
    """State shared by every builder of one export: opset, fresh names, named ONNX functions."""

    def __init__(self, opset, double_precision):
        self.opset = opset
        self.double_precision = double_precision
        self._counter = itertools.count()
        self.functions = {}
        self.reserved = set()

    def fresh(self, prefix):
        """A name no other value, node or graph of this export uses (user input/output names are reserved)."""
        while True:
            name = f"{prefix}_{next(self._counter)}"
            if name not in self.reserved:
                return name


def x64_mode(enabled):
    """Context manager turning JAX's 64-bit mode on (or leaving the global setting alone when not enabled)."""
    import jax
    if not enabled:
        return contextlib.nullcontext()
    return jax.enable_x64(True)


def input_specs(inputs, double_precision=False):
    """jax.ShapeDtypeStructs for ``inputs``: shape tuples (ints or symbolic names such as "B"), ShapeDtypeStructs
    or arrays. Symbolic names are shared across inputs: every "B" is the same dimension."""
    import jax
    from jax import export as jax_export

    default = np.float64 if double_precision else np.float32
    entries = []
    for item in inputs:
        if isinstance(item, (tuple, list)):
            entries.append((tuple(item), np.dtype(default)))
        elif hasattr(item, "shape") and hasattr(item, "dtype"):
            entries.append((tuple(item.shape), np.dtype(item.dtype)))
        else:
            raise TypeError(f"nxrt.jax.to_onnx: an input must be a shape tuple, a jax.ShapeDtypeStruct or an "
                            f"array, not {type(item).__name__}")
    names, scope = [], None
    for shape, _ in entries:
        for d in shape:
            if isinstance(d, str) and d not in names:
                names.append(d)
            elif is_symbolic(d) and not isinstance(d, str) and scope is None:
                scope = d.scope
    symbols = {}
    if names:
        kwargs = {"scope": scope} if scope is not None else {}
        symbols = dict(zip(names, jax_export.symbolic_shape(", ".join(names), **kwargs)))
    return [jax.ShapeDtypeStruct(tuple(symbols[d] if isinstance(d, str) else d for d in shape), dtype)
            for shape, dtype in entries]


def _argument_names(fn, count):
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    if len(params) >= count:
        return [p.name for p in params[:count]]
    return [f"in_{i}" for i in range(count)]


def _is_array_like(value):
    return hasattr(value, "shape") and hasattr(value, "dtype")


def to_onnx(fn, inputs, *, input_params=None, model_name="jax_model", opset=21, enable_double_precision=False,
            input_names=None, output_names=None, output_path=None, native_ops=True):
    """Exports ``fn`` to an ONNX model and returns the onnx.ModelProto (also saved to ``output_path`` if given).

    ``inputs`` lists one entry per positional argument of ``fn``: a shape tuple whose entries are ints or
    symbolic names ("B"), a jax.ShapeDtypeStruct (dims may be symbolic) or an example array. ``input_params`` are
    keyword arguments: arrays and ShapeDtypeStructs among them become extra graph inputs named after their key,
    anything else is passed to ``fn`` as a static value. Symbolic dimensions stay symbolic (dim_param) in the
    model. ``enable_double_precision`` traces with JAX's x64 mode so float64 stays float64 end to end.
    ``native_ops`` exports layers and ``jax.nn`` functions that have a matching ONNX op (Gemm, LayerNormalization,
    BatchNormalization, GroupNormalization, AveragePool, activations, Softmax, Attention ...; see native_layers)
    as that op instead of their primitives.
    """
    import jax

    if opset < MIN_OPSET:
        raise ValueError(f"nxrt.jax.to_onnx: opset {opset} is below the minimum supported opset {MIN_OPSET}")
    params = dict(input_params or {})
    dynamic_keys = [k for k, v in params.items() if _is_array_like(v)]
    static = {k: v for k, v in params.items() if k not in dynamic_keys}

    with x64_mode(enable_double_precision):
        specs = input_specs(list(inputs) + [params[k] for k in dynamic_keys], enable_double_precision)
        n_positional = len(specs) - len(dynamic_keys)

        def flat_fn(*args):
            kwargs = dict(static)
            kwargs.update(zip(dynamic_keys, args[n_positional:]))
            return fn(*args[:n_positional], **kwargs)

        with native_layers(native_ops):
            closed, out_shape = jax.make_jaxpr(flat_fn, return_shape=True)(*specs)
        exporter = Exporter(opset, enable_double_precision)
        names = list(input_names) if input_names else _argument_names(fn, n_positional) + dynamic_keys
        if len(names) != len(specs):
            raise ValueError(f"nxrt.jax.to_onnx: {len(names)} input names for {len(specs)} inputs")
        exporter.reserved.update(names)
        exporter.reserved.update(output_names or ())
        root = GraphBuilder(exporter)
        in_avals = [v.aval for v in closed.jaxpr.invars]
        _add_dim_sources(root, names, in_avals)
        outs = root.lower(closed, names)

    out_avals = [v.aval for v in closed.jaxpr.outvars]
    leaves = jax.tree_util.tree_leaves(out_shape)
    assert len(leaves) == len(outs)
    out_names = list(output_names) if output_names else [f"out_{i}" for i in range(len(outs))]
    if len(out_names) != len(outs):
        raise ValueError(f"nxrt.jax.to_onnx: {len(out_names)} output names for {len(outs)} outputs")
    _name_outputs(root, outs, out_names)

    graph = helper.make_graph(
        root.nodes, model_name,
        [value_info(n, a.dtype, a.shape) for n, a in zip(names, in_avals)],
        [value_info(n, a.dtype, a.shape) for n, a in zip(out_names, out_avals)],
        initializer=root.initializers)
    opsets = [helper.make_opsetid("", opset)]
    if exporter.functions:
        opsets.append(helper.make_opsetid(FUNCTION_DOMAIN, 1))
    model = helper.make_model(graph, opset_imports=opsets, producer_name="nxrt.jax",
                              functions=list(exporter.functions.values()))
    model.ir_version = max(10, helper.find_min_ir_version_for(opsets, ignore_unknown=True))
    helper.set_model_props(model, {DOUBLE_PRECISION_KEY: "1" if enable_double_precision else "0"})
    if output_path is not None:
        onnx.save(model, str(output_path))
    return model


def _subgraph_reads(node):
    """Names that the subgraphs of ``node`` (and theirs) mention."""
    names = set()
    for attr in node.attribute:
        for graph in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
            for inner in graph.node:
                names.update(inner.input)
                names.update(_subgraph_reads(inner))
    return names


def _name_outputs(root, outs, out_names):
    """Gives each output its name: the producing node's output is renamed where that is safe (a node output used
    once as a graph output and not read by a subgraph), else an Identity copies it, so that runtimes write the
    result straight into the caller's buffer."""
    producer = {o: node for node in root.nodes for o in node.output}
    in_subgraphs = set().union(*[_subgraph_reads(node) for node in root.nodes]) if root.nodes else set()
    renames = {}
    for out, name in zip(outs, out_names):
        if out in producer and outs.count(out) == 1 and out not in in_subgraphs:
            renames[out] = name
        else:
            root.op("Identity", out, outputs=[name])
    for node in root.nodes:
        node.output[:] = [renames.get(o, o) for o in node.output]
        node.input[:] = [renames.get(i, i) for i in node.input]


def _add_dim_sources(root, names, avals):
    """Records, for every symbolic variable that is a whole axis of an input, how to read its size."""
    for name, aval in zip(names, avals):
        for axis, d in enumerate(aval.shape):
            if not is_symbolic(d):
                continue
            var = d._to_var() if hasattr(d, "_to_var") else None
            if var is not None and var not in root.dim_sources:
                root.dim_sources[var] = (lambda n=name, a=axis: root.op("Shape", n, start=a, end=a + 1))

