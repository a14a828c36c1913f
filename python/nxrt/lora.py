"""onnxruntime's LoRA adapter files (``.onnx_adapter``) and their Python API: AdapterFormat (read, write) and
LoraAdapter (parameters a run feeds through RunOptions.add_active_adapter).

The file is a FlatBuffer (file identifier "TORT") whose root table Adapter holds, by field id: 0 format_version
(int32, 1), 1 adapter_version (int32), 2 model_version (int32), 3 parameters (a vector of Parameter tables);
Parameter: 0 name (string), 1 dims (vector of int64), 2 data_type (int32, the ONNX TensorProto element type),
3 raw_data (vector of uint8, its bytes aligned to 8). FlatBuffer layout: a table starts with an int32 offset back
to its vtable (table position minus vtable position); the vtable holds its own byte size, the table's size, then
one uint16 offset per field (0: absent); references to strings, vectors and tables are uint32 offsets forward from
where they are stored; a vector or string is a uint32 count followed by its elements."""

import struct

import numpy as np

from nxrt.ortvalue import OrtValue

FORMAT_VERSION = 1
_IDENTIFIER = b"TORT"


class _Reader:
    def __init__(self, data):
        self.data = memoryview(data).tobytes()

    def u32(self, at):
        if at < 0 or at + 4 > len(self.data):
            raise ValueError("the adapter file is truncated or malformed")
        return struct.unpack_from("<I", self.data, at)[0]

    def field(self, table, index):
        """Position of field `index` of the table at `table`, or None when absent."""
        vtable = table - struct.unpack_from("<i", self.data, table)[0]
        size = struct.unpack_from("<H", self.data, vtable)[0]
        if 4 + 2 * index + 2 > size:
            return None
        offset = struct.unpack_from("<H", self.data, vtable + 4 + 2 * index)[0]
        return table + offset if offset else None

    def int32(self, table, index, default=0):
        at = self.field(table, index)
        return default if at is None else struct.unpack_from("<i", self.data, at)[0]

    def target(self, table, index):
        at = self.field(table, index)
        return None if at is None else at + self.u32(at)

    def vector(self, table, index):
        """(count, position of the first element), (0, 0) when absent."""
        at = self.target(table, index)
        if at is None:
            return 0, 0
        count = self.u32(at)
        return count, at + 4


def _parameter(reader, table):
    name_at = reader.target(table, 0)
    if name_at is None:
        raise ValueError("an adapter parameter has no name")
    length = reader.u32(name_at)
    name = reader.data[name_at + 4:name_at + 4 + length].decode("utf-8")
    count, dims_at = reader.vector(table, 1)
    dims = list(struct.unpack_from(f"<{count}q", reader.data, dims_at)) if count else []
    element_type = reader.int32(table, 2)
    size, raw_at = reader.vector(table, 3)
    from nxrt._nxrt import numpy_dtype

    dtype = np.dtype(numpy_dtype(element_type))
    if dtype == object or any(d < 0 for d in dims) or size != int(np.prod(dims)) * dtype.itemsize:
        raise ValueError(f"adapter parameter '{name}': {size} data bytes do not hold a {dims} tensor of "
                         f"element type {element_type}")
    array = np.frombuffer(reader.data, dtype=dtype, count=int(np.prod(dims)), offset=raw_at).reshape(dims).copy()
    return name, OrtValue.ortvalue_from_numpy(array)


def _read(data):
    """(adapter_version, model_version, parameters) of an adapter file's bytes; ValueError when malformed."""
    try:
        return _read_checked(data)
    except (struct.error, IndexError, UnicodeDecodeError, OverflowError) as error:
        raise ValueError(f"malformed adapter file: {error}") from None


def _read_checked(data):
    reader = _Reader(data)
    if len(reader.data) < 8 or reader.data[4:8] != _IDENTIFIER:
        raise ValueError("not an onnxruntime adapter file (no 'TORT' identifier)")
    root = reader.u32(0)
    version = reader.int32(root, 0)
    if version != FORMAT_VERSION:
        raise ValueError(f"adapter format version {version} is not supported (only {FORMAT_VERSION})")
    count, at = reader.vector(root, 3)
    parameters = dict(_parameter(reader, at + 4 * i + reader.u32(at + 4 * i)) for i in range(count))
    return reader.int32(root, 1), reader.int32(root, 2), parameters


class _Writer:
    """Lays the buffer out front to back: every reference points forward, as uint32 offsets must."""

    def __init__(self):
        self.out = bytearray()
        self.patches = []  # (position of a uint32 reference, key of its target)
        self.places = {}

    def align(self, alignment, extra=0):
        while (len(self.out) + extra) % alignment:
            self.out.append(0)

    def table(self, fields):
        """fields: (kind, value) per field id, kind "i32" (inline int32) or "ref" (key of a later object)."""
        self.align(4)
        vtable = len(self.out)
        size = 4 + 4 * len(fields)
        self.out += struct.pack(f"<HH{len(fields)}H", 4 + 2 * len(fields), size,
                                *[4 + 4 * i for i in range(len(fields))])
        self.align(4)
        table = len(self.out)
        self.out += struct.pack("<i", table - vtable)
        for kind, value in fields:
            if kind == "i32":
                self.out += struct.pack("<i", value)
            else:
                self.patches.append((len(self.out), value))
                self.out += b"\0\0\0\0"
        return table

    def place(self, key, payload, count, alignment=4):
        self.align(max(alignment, 4), extra=4)
        self.places[key] = len(self.out)
        self.out += struct.pack("<I", count) + payload

    def finish(self):
        for at, key in self.patches:
            struct.pack_into("<I", self.out, at, self.places[key] - at)
        return bytes(self.out)


def _write(adapter_version, model_version, parameters):
    writer = _Writer()
    writer.out += b"\0\0\0\0" + _IDENTIFIER
    root = writer.table([("i32", FORMAT_VERSION), ("i32", adapter_version), ("i32", model_version),
                         ("ref", "parameters")])
    struct.pack_into("<I", writer.out, 0, root)
    items = list(parameters.items())
    writer.align(4, extra=4)
    writer.places["parameters"] = len(writer.out)
    writer.out += struct.pack("<I", len(items))
    slots = []
    for _ in items:
        slots.append(len(writer.out))
        writer.out += b"\0\0\0\0"
    for i, (name, value) in enumerate(items):
        array = np.ascontiguousarray(value.numpy() if isinstance(value, OrtValue) else np.asarray(value))
        element_type = value.element_type() if isinstance(value, OrtValue) else OrtValue.ortvalue_from_numpy(
            array).element_type()
        table = writer.table([("ref", ("name", i)), ("ref", ("dims", i)), ("i32", element_type),
                              ("ref", ("raw", i))])
        struct.pack_into("<I", writer.out, slots[i], table - slots[i])
        encoded = str(name).encode("utf-8")
        writer.place(("name", i), encoded + b"\0", len(encoded))
        writer.place(("dims", i), struct.pack(f"<{array.ndim}q", *array.shape), array.ndim, alignment=8)
        writer.place(("raw", i), array.tobytes(), array.nbytes, alignment=8)
    return writer.finish()


class AdapterFormat:
    """An adapter file's contents: versions and named parameters (OrtValues)."""

    def __init__(self):
        self._adapter_version, self._model_version, self._parameters = 0, 0, {}

    format_version = property(lambda self: FORMAT_VERSION)
    adapter_version = property(lambda self: self._adapter_version,
                               lambda self, value: setattr(self, "_adapter_version", int(value)))
    model_version = property(lambda self: self._model_version,
                             lambda self, value: setattr(self, "_model_version", int(value)))
    parameters = property(lambda self: dict(self._parameters),
                          lambda self, value: setattr(self, "_parameters", dict(value)))

    def get_format_version(self):
        return FORMAT_VERSION

    def get_adapter_version(self):
        return self._adapter_version

    def set_adapter_version(self, version):
        self.adapter_version = version

    def get_model_version(self):
        return self._model_version

    def set_model_version(self, version):
        self.model_version = version

    def get_parameters(self):
        return self.parameters

    def set_parameters(self, parameters):
        self.parameters = parameters

    def export_adapter(self, file_path):
        with open(file_path, "wb") as file:
            file.write(_write(self._adapter_version, self._model_version, self._parameters))

    @staticmethod
    def read_adapter(file_path):
        with open(file_path, "rb") as file:
            adapter_version, model_version, parameters = _read(file.read())
        result = AdapterFormat()
        result._adapter_version, result._model_version, result._parameters = adapter_version, model_version, \
            parameters
        return result


class LoraAdapter:
    """Parameters a run feeds by name once RunOptions.add_active_adapter(adapter) names it (they take the place of
    the model inputs or overridable initializers of those names)."""

    def __init__(self):
        self._parameters = {}

    def Load(self, file_path):  # noqa: N802  (onnxruntime's name)
        self._parameters = AdapterFormat.read_adapter(file_path).get_parameters()

    @staticmethod
    def create_lora_adapter(file_path):
        adapter = LoraAdapter()
        adapter.Load(file_path)
        return adapter

    def _feeds(self):
        return {name: value._feed() for name, value in self._parameters.items()}
