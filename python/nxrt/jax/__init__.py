"""nxrt.jax: export JAX, Flax NNX and Equinox callables to ONNX, and verify the export against JAX.

    import nxrt.jax
    model = nxrt.jax.to_onnx(fn, inputs=[("B", 16)], opset=21)      # an onnx.ModelProto, "B" stays symbolic
    print(nxrt.jax.verify(fn, model, n=3))                         # max error vs JAX over random inputs

Each JAX primitive has one handler in a registry (see ``register_primitive``); an unsupported primitive raises
UnsupportedPrimitiveError naming it, where it was used, and how to add a handler. Needs ``jax`` and ``onnx``.
"""

from nxrt.jax.registry import UnsupportedPrimitiveError, handler_for, register_primitive, registered_primitives
from nxrt.jax import handlers_control, handlers_elementwise, handlers_indexing, handlers_nn  # noqa: F401
from nxrt.jax import handlers_random, handlers_reduce, handlers_shape  # noqa: F401
from nxrt.jax.builder import GraphBuilder
from nxrt.jax.export import input_specs, to_onnx
from nxrt.jax.functions import onnx_function
from nxrt.jax.verify import VerifyResult, verify

__all__ = ["GraphBuilder", "UnsupportedPrimitiveError", "VerifyResult", "handler_for", "input_specs",
           "onnx_function", "register_primitive", "registered_primitives", "to_onnx", "verify"]
