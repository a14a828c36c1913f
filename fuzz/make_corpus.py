"""Writes the committed fuzz corpora from the ONNX backend node test cases of the installed `onnx` package:

    .venv/bin/python fuzz/make_corpus.py BUILD/fuzz/fuzz_case_to_model

fuzz/corpus/kernel/<case>: every single-node case (op, opset, attributes, input dtypes, shapes and values of its
first data set, truncated as fuzz_kernel truncates them) in fuzz_kernel's byte format; fuzz/corpus/graph/<case>:
every case of 2-6 nodes in fuzz_graph's format. fuzz/fuzz_model_builder.h documents the format; this file is its
encoder and must change with it. Cases of ops nxrt does not register (per `fuzz_case_to_model ops`) are left out.
The folders are rewritten from scratch.
"""

import pathlib
import shutil
import struct
import subprocess
import sys
import warnings

import numpy as np
import onnx
from onnx import defs, numpy_helper

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from gen_op_schemas import onnx_schema_rows  # noqa: E402

DOMAINS = ["", "ai.onnx.ml", "com.microsoft", "ai.onnx.preview.training", "com.nxrt"]
MAX_ELEMENTS = 4096  # fuzz_kernel's cap per tensor
SEED_MAX_ELEMENTS = 512  # the seeds' own: larger tensors are shrunk (largest dim halved) to keep the corpus small
MAX_SMALL = 63  # small(v) spells values up to 63 exactly
STRING = 8
SUPPORTED_ATTRIBUTES = {1, 2, 3, 4, 5, 6, 7, 8}
FUZZ_DIR = pathlib.Path(__file__).resolve().parent


class Skip(Exception):
    """The case cannot be expressed in the byte format."""


class Encoder:
    """Header bytes from the front; data pieces in the order the decoder consumes them from the back."""

    def __init__(self):
        self.head = bytearray()
        self.pieces = []

    def u8(self, value):
        if not 0 <= value <= 255:
            raise Skip(f"byte value {value}")
        self.head.append(value)

    def small(self, value):
        self.u8(min(value, MAX_SMALL))
        return min(value, MAX_SMALL)

    def varint(self, value):
        value = max(-(1 << 63), min(value, (1 << 63) - 1))
        zigzag = ((value << 1) ^ (value >> 63)) & ((1 << 64) - 1)
        while True:
            byte = zigzag & 0x7F
            zigzag >>= 7
            self.head.append(byte | (0x80 if zigzag else 0))
            if not zigzag:
                return

    def f32(self, value):
        self.head += struct.pack("<f", value)

    def text(self, data):
        self.head += data

    def data(self, data):
        self.pieces.append(bytes(data))

    def finish(self):
        return bytes(self.head) + b"".join(reversed(self.pieces))


def clamp(dims, cap=MAX_ELEMENTS):
    """The decoder's truncation of a shape (also used with the seeds' smaller cap)."""
    dims = [min(d, MAX_SMALL) for d in dims]
    while np.prod(dims, dtype=np.int64) > cap:
        largest = dims.index(max(dims))
        dims[largest] //= 2
    return dims


def write_shape_and_values(enc, array, elem_type):
    if isinstance(array, onnx.TensorProto):
        array = numpy_helper.to_array(array)
    array = np.asarray(array)
    if array.ndim > 6:
        raise Skip("rank > 6")
    enc.u8(array.ndim)
    dims = clamp(list(array.shape), SEED_MAX_ELEMENTS)
    for dim in dims:
        enc.u8(dim)
    count = int(np.prod(dims, dtype=np.int64))
    flat = array.reshape(-1)[:count]
    if elem_type == STRING:
        for item in flat:
            text = item if isinstance(item, bytes) else str(item).encode()
            text = text[:MAX_SMALL]
            enc.data(bytes([len(text)]))
            enc.data(text)
        return
    if elem_type == onnx.TensorProto.BOOL:
        enc.data(flat.astype(np.uint8).tobytes())
        return
    try:
        raw = numpy_helper.from_array(flat).raw_data
    except (NotImplementedError, TypeError, ValueError):
        raw = b""
    enc.data(raw if raw else flat.tobytes())


def elem_type_of(type_proto):
    which = type_proto.WhichOneof("value")
    if which == "tensor_type":
        return type_proto.tensor_type.elem_type, False
    if which == "sequence_type":
        return elem_type_of(type_proto.sequence_type.elem_type)[0], True
    if which == "optional_type":
        return elem_type_of(type_proto.optional_type.elem_type)
    raise Skip(f"{which} value")


def write_input(enc, value, type_proto, initializer):
    """A kernel_input: mode, dtype and shapes; values into the data section."""
    if value is None:
        enc.u8(2)
        return
    elem_type, sequence = elem_type_of(type_proto)
    if sequence or isinstance(value, list):
        enc.u8(0x10)
        enc.u8(elem_type)
        elements = list(value)[:3]
        enc.u8(len(elements))
        for element in elements:
            write_shape_and_values(enc, element, elem_type)
        return
    enc.u8(1 if initializer and elem_type != STRING else 0)
    enc.u8(elem_type)
    write_shape_and_values(enc, value, elem_type)


def write_graph_body(enc, graph):
    inputs = list(graph.input)[:3]
    enc.u8(len(inputs))
    for value_info in inputs:
        try:
            elem_type, _ = elem_type_of(value_info.type)
        except Skip:
            elem_type = 1
        enc.u8(elem_type)
        tensor_type = value_info.type.tensor_type
        rank = len(tensor_type.shape.dim) if tensor_type.HasField("shape") else 7
        enc.u8(min(rank, 7))
    enc.u8(0)
    outputs = max(1, min(len(graph.output), 3))
    enc.u8(outputs - 1)
    for index in range(outputs):
        enc.u8(0x80 | index)


def write_attributes(enc, node):
    attributes = [a for a in node.attribute if a.type in SUPPORTED_ATTRIBUTES and not a.ref_attr_name]
    enc.small(len(attributes))
    for attribute in attributes[:MAX_SMALL]:
        name = attribute.name.encode()
        enc.u8(0x80 | len(name))
        enc.text(name)
        enc.u8(attribute.type)
        kind = attribute.type
        if kind == onnx.AttributeProto.FLOAT:
            enc.f32(attribute.f)
        elif kind == onnx.AttributeProto.INT:
            enc.varint(attribute.i)
        elif kind == onnx.AttributeProto.STRING:
            text = attribute.s[:enc.small(len(attribute.s))]
            enc.text(text)
        elif kind == onnx.AttributeProto.TENSOR:
            elem_type = attribute.t.data_type
            enc.u8(elem_type if elem_type != STRING else 1)
            array = numpy_helper.to_array(attribute.t)
            if elem_type == STRING:
                array = np.zeros(array.shape, np.float32)
            write_shape_and_values(enc, array, elem_type if elem_type != STRING else 1)
        elif kind == onnx.AttributeProto.GRAPH:
            write_graph_body(enc, attribute.g)
        elif kind == onnx.AttributeProto.FLOATS:
            for value in attribute.floats[:enc.small(len(attribute.floats))]:
                enc.f32(value)
        elif kind == onnx.AttributeProto.INTS:
            for value in attribute.ints[:enc.small(len(attribute.ints))]:
                enc.varint(value)
        else:
            for value in attribute.strings[:enc.small(len(attribute.strings))]:
                enc.text(value[:enc.small(len(value))])


def write_op_ref(enc, node):
    domain = "" if node.domain == "ai.onnx" else node.domain
    if domain not in DOMAINS:
        raise Skip(f"domain {domain}")
    name = node.op_type.encode()
    enc.u8(len(name))
    enc.text(name)
    enc.u8(DOMAINS.index(domain))
    return domain


def schema_counts(node, domain, opset):
    schema = defs.get_schema(node.op_type, opset, domain)
    _, _, _, min_in, max_in, min_out, max_out, optional_outputs, _, _ = onnx_schema_rows(schema)
    return min_in, max(min_in, max_in), min_out, max(min_out, max_out), optional_outputs


def write_counts_byte(enc, count, low, high):
    if not low <= count <= high:
        raise Skip(f"count {count} outside {low}..{high}")
    enc.u8(count - low)


def write_outputs(enc, node, min_out, max_out, optional_outputs):
    outputs = list(node.output)
    if not min_out <= len(outputs) <= max_out:
        raise Skip("output count")
    value = len(outputs) - min_out
    for index, name in enumerate(outputs[:4]):
        if not name and (optional_outputs >> index) & 1:
            value |= 1 << (4 + index)
    enc.u8(value)


class Case:
    """A backend node case: its model, first data set and where each graph value comes from."""

    def __init__(self, test_case):
        self.name = test_case.name
        self.model = test_case.model or onnx.load(str(pathlib.Path(test_case.model_dir) / "model.onnx"))
        graph = self.model.graph
        self.opsets = {("" if o.domain == "ai.onnx" else o.domain): o.version for o in self.model.opset_import}
        self.initializers = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        self.types = {v.name: v.type for v in graph.input}
        for tensor in graph.initializer:
            self.types.setdefault(tensor.name, onnx.helper.make_tensor_type_proto(tensor.data_type, tensor.dims))
        fed = [v.name for v in graph.input if v.name not in self.initializers]
        inputs = list(test_case.data_sets[0][0]) if test_case.data_sets else []
        self.feeds = dict(zip(fed, inputs))

    def write_value(self, enc, name):
        if name in self.initializers:
            write_input(enc, self.initializers[name], self.types[name], True)
        elif name in self.feeds:
            write_input(enc, self.feeds[name], self.types[name], False)
        else:
            raise Skip(f"value {name} has no data")


def covered(registry, domain, op_type, opset):
    return any(since <= opset <= last for since, last in registry.get((domain, op_type), []))


def kernel_seed(case, registry):
    node = case.model.graph.node[0]
    enc = Encoder()
    enc.u8(0x01)
    domain = write_op_ref(enc, node)
    opset = case.opsets.get(domain, 1)
    if not covered(registry, domain, node.op_type, opset):
        raise Skip("not registered at this opset")
    enc.u8(opset)
    min_in, max_in, min_out, max_out, optional_outputs = schema_counts(node, domain, opset)
    write_counts_byte(enc, len(node.input), min_in, max_in)
    for name in node.input:
        if name:
            case.write_value(enc, name)
        else:
            enc.u8(2)
    write_outputs(enc, node, min_out, max_out, optional_outputs)
    write_attributes(enc, node)
    return enc.finish()


def graph_seed(case, registry):
    enc = Encoder()
    enc.u8(0x01)
    onnx_opset = case.opsets.get("", 21)
    ml_opset = case.opsets.get("ai.onnx.ml", 5)
    enc.u8(onnx_opset)
    enc.u8((ml_opset - 1) % 5)
    nodes = list(case.model.graph.node)
    enc.u8(len(nodes) - 2)
    fixed = {"": onnx_opset, "ai.onnx.ml": 1 + (ml_opset - 1) % 5}
    visible = []
    for node in nodes:
        domain = write_op_ref(enc, node)
        opset = fixed.get(domain, 1)
        if not covered(registry, domain, node.op_type, opset):
            raise Skip(f"{node.op_type} not registered at opset {opset}")
        min_in, max_in, min_out, max_out, optional_outputs = schema_counts(node, domain, opset)
        write_counts_byte(enc, len(node.input), min_in, max_in)
        for name in node.input:
            if not name:
                enc.u8(255)
            elif name in visible and visible.index(name) < 192:
                enc.u8(visible.index(name))
            else:
                enc.u8(0xC0)
                case.write_value(enc, name)
                visible.append(name)
        write_outputs(enc, node, min_out, max_out, optional_outputs)
        write_attributes(enc, node)
        visible.extend(name for name in node.output if name)
    return enc.finish()


def registered_ops(tool):
    registry = {}
    listing = subprocess.run([tool, "ops"], check=True, capture_output=True, text=True).stdout
    for line in listing.splitlines():
        domain, op_type, since, last = line.split("\t")
        registry.setdefault((domain, op_type), []).append((int(since), int(last)))
    return registry


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    registry = registered_ops(sys.argv[1])
    from onnx.backend.test.loader import load_model_tests

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = load_model_tests(kind="node")
    folders = {"kernel": FUZZ_DIR / "corpus" / "kernel", "graph": FUZZ_DIR / "corpus" / "graph"}
    for folder in folders.values():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    written = {"kernel": 0, "graph": 0}
    skipped = {}
    for test_case in cases:
        case = Case(test_case)
        count = len(case.model.graph.node)
        kind = "kernel" if count == 1 else "graph" if 2 <= count <= 6 else None
        if kind is None:
            continue
        try:
            seed = kernel_seed(case, registry) if kind == "kernel" else graph_seed(case, registry)
        except Skip as reason:
            skipped[str(reason).split(" ")[0]] = skipped.get(str(reason).split(" ")[0], 0) + 1
            continue
        (folders[kind] / case.name).write_bytes(seed)
        written[kind] += 1
    print(f"wrote {written['kernel']} kernel and {written['graph']} graph seeds; skipped: {skipped}")


if __name__ == "__main__":
    main()
