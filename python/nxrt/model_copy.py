"""The copy of a model that SessionOptions.optimized_model_filepath asks for, with its main graph's initializers
placed as onnxruntime's session config entries say:

- ``session.optimized_model_external_initializers_file_name``: initializers of at least
  ``session.optimized_model_external_initializers_min_size_in_bytes`` bytes (default 1024) go to that file, named
  relative to the copy's directory; the others are stored in the copy.
- Without a file name, every initializer is stored in the copy, those the source model kept in external files
  included, so that the copy never points at a file that is not beside it.

with_initializers_inline serves SessionOptions.add_external_initializers_from_files_in_memory: external data
files given in memory take the place of files on disk.

The model is rewritten at the protobuf wire level (no onnx package needed): ModelProto.graph (field 7),
GraphProto.initializer (field 5), TensorProto raw_data (9), external_data (13: StringStringEntryProto key 1, value
2) and data_location (14, 1 = EXTERNAL). Every other field is copied byte for byte. Initializers of subgraphs are
copied unchanged."""

import os

_VARINT, _FIXED64, _LENGTH, _FIXED32 = 0, 1, 2, 5
_MODEL_GRAPH, _GRAPH_INITIALIZER = 7, 5
_TENSOR_RAW_DATA, _TENSOR_EXTERNAL_DATA, _TENSOR_DATA_LOCATION = 9, 13, 14
_EXTERNAL = 1


def _read_varint(data, pos):
    value, shift = 0, 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ValueError("malformed protobuf varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _fields(data):
    """(field number, wire type, payload, the field's bytes) for each field of a message: the payload is the int
    of a varint, else the bytes after the key (and length)."""
    pos = 0
    while pos < len(data):
        start = pos
        key, pos = _read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == _VARINT:
            payload, pos = _read_varint(data, pos)
        elif wire == _FIXED64:
            payload, pos = data[pos:pos + 8], pos + 8
        elif wire == _FIXED32:
            payload, pos = data[pos:pos + 4], pos + 4
        elif wire == _LENGTH:
            length, pos = _read_varint(data, pos)
            payload, pos = data[pos:pos + length], pos + length
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        if pos > len(data):
            raise ValueError("truncated protobuf message")
        yield number, wire, payload, data[start:pos]


def _length_field(number, payload):
    return _varint(number << 3 | _LENGTH) + _varint(len(payload)) + payload


def _external_entries(entries):
    return b"".join(_length_field(_TENSOR_EXTERNAL_DATA,
                                  _length_field(1, key.encode()) + _length_field(2, value.encode()))
                    for key, value in entries)


class _DataFile:
    """The external initializers file being written (created even when no initializer reaches the size)."""

    def __init__(self, path, name, min_size):
        self.name, self.min_size = name, min_size
        self.file = open(path, "wb")

    def append(self, data):
        offset = self.file.tell()
        self.file.write(data)
        return offset

    def close(self):
        self.file.close()


def _external_bytes(entries, source_dir, files):
    """The bytes an external_data list names: from `files` (file name -> bytes in memory) when it holds the
    location, else from the file (relative to the source model's directory)."""
    location = entries.get("location")
    offset, length = int(entries.get("offset", 0)), entries.get("length")
    if location in files:
        whole = memoryview(files[location])
        data = bytes(whole[offset:] if length is None else whole[offset:offset + int(length)])
    else:
        if not location or source_dir is None:
            raise ValueError(f"an initializer's external data file '{location}' cannot be read (no model directory)")
        with open(os.path.join(source_dir, location), "rb") as file:
            file.seek(offset)
            data = file.read() if length is None else file.read(int(length))
    if length is not None and len(data) != int(length):
        raise ValueError(f"external data file '{location}' is shorter than the initializer it holds")
    return data


def _copy_tensor(tensor, source_dir, data_file, files):
    kept, raw, external = [], None, {}
    for number, wire, payload, field in _fields(tensor):
        if number == _TENSOR_RAW_DATA and wire == _LENGTH:
            raw = payload
        elif number == _TENSOR_EXTERNAL_DATA and wire == _LENGTH:
            entry = {key: value for key, _, value, _ in _fields(payload)}
            external[bytes(entry.get(1, b"")).decode()] = bytes(entry.get(2, b"")).decode()
        elif number == _TENSOR_DATA_LOCATION and wire == _VARINT:
            pass
        else:
            kept.append(field)
    if external:
        raw = _external_bytes(external, source_dir, files)
    if raw is None:  # typed data fields: copied as they are
        return tensor
    body = b"".join(kept)
    if data_file is not None and len(raw) >= data_file.min_size:
        offset = data_file.append(raw)
        entries = [("location", data_file.name), ("offset", str(offset)), ("length", str(len(raw)))]
        return body + _external_entries(entries) + _varint(_TENSOR_DATA_LOCATION << 3 | _VARINT) + _varint(_EXTERNAL)
    return body + _length_field(_TENSOR_RAW_DATA, raw)


def _copy_graph(graph, source_dir, data_file, files):
    out = []
    for number, wire, payload, field in _fields(graph):
        if number == _GRAPH_INITIALIZER and wire == _LENGTH:
            out.append(_length_field(number, _copy_tensor(payload, source_dir, data_file, files)))
        else:
            out.append(field)
    return b"".join(out)


def _rewrite(model, source_dir, data_file, files):
    out = []
    for number, wire, payload, field in _fields(memoryview(model).tobytes()):
        if number == _MODEL_GRAPH and wire == _LENGTH:
            out.append(_length_field(number, _copy_graph(payload, source_dir, data_file, files)))
        else:
            out.append(field)
    return b"".join(out)


def write_model_copy(model, source_dir, target, data_file_name=None, min_size=1024):
    """Writes `model` (its bytes; external data relative to `source_dir`, None for a model given as bytes) to the
    path `target`, initializers of at least `min_size` bytes in `data_file_name` beside it when given."""
    data_file = None
    if data_file_name:
        directory = os.path.dirname(os.path.abspath(target))
        data_file = _DataFile(os.path.join(directory, data_file_name), data_file_name, int(min_size))
    try:
        data = _rewrite(model, source_dir, data_file, {})
    finally:
        if data_file is not None:
            data_file.close()
    with open(target, "wb") as file:
        file.write(data)


def with_initializers_inline(model, source_dir, files):
    """`model`'s bytes with every main-graph initializer stored in it: external data read from `files` (file name
    -> bytes in memory: SessionOptions.add_external_initializers_from_files_in_memory) or from the files beside
    the model."""
    return _rewrite(model, source_dir, None, files)
