"""Exports simple_add (z = 2 * x + y over a symbolic batch "B") from JAX to ONNX, checks it against JAX on
nxrt and onnxruntime, and runs it from Python. The C and C++ examples run the written file unchanged:

    .venv/bin/python examples/jax/export_simple_add.py simple_add.onnx
    build/example_c_simple_add simple_add.onnx
    build/example_cpp_simple_add_io_binding simple_add.onnx
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

import nxrt
import nxrt.jax


def simple_add(x, y):
    return 2.0 * x + y


def main(path):
    spec = jax.ShapeDtypeStruct(("B",), jnp.float32)
    model = nxrt.jax.to_onnx(simple_add, inputs=[spec, spec], output_names=["z"], model_name="simple_add",
                             output_path=path, opset=22)
    report = nxrt.jax.verify(simple_add, model, n=3, runtimes=("nxrt", "onnxruntime"))
    print(report)
    if not report.ok(1e-6):
        return 1
    session = nxrt.InferenceSession(path)
    print("inputs:", [(arg.name, arg.shape, arg.type) for arg in session.get_inputs()])
    for batch in (1, 4, 1000):
        x = np.arange(batch, dtype=np.float32)
        y = np.full(batch, 10.0, dtype=np.float32)
        (z,) = session.run(None, {"x": x, "y": y})
        if not np.array_equal(z, 2 * x + y):
            print(f"B={batch}: wrong result {z[:4]}")
            return 1
        print(f"B={batch}: z[:4] = {z[:4]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "simple_add.onnx"))
