"""onnxruntime's SparseTensor (COO and CSR(C) forms over numpy arrays) and OrtSparseFormat, for code that builds and
inspects sparse values through that API. nxrt's kernels take dense tensors: a session refuses a SparseTensor feed
with an error that says so (SparseTensor.to_dense() gives what it takes)."""

import enum

import numpy as np

__all__ = ["OrtSparseFormat", "SparseTensor"]


class OrtSparseFormat(enum.IntEnum):
    ORT_SPARSE_UNDEFINED = 0
    ORT_SPARSE_COO = 1
    ORT_SPARSE_CSRC = 2
    ORT_SPARSE_BLOCK_SPARSE = 4


_ONNX_NAMES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double", np.dtype(np.float16): "float16",
               np.dtype(np.int8): "int8", np.dtype(np.int16): "int16", np.dtype(np.int32): "int32",
               np.dtype(np.int64): "int64", np.dtype(np.uint8): "uint8", np.dtype(np.uint16): "uint16",
               np.dtype(np.uint32): "uint32", np.dtype(np.uint64): "uint64", np.dtype(np.bool_): "bool"}


def _element_name(values):
    if values.dtype.kind in "OUS":
        return "string"
    name = _ONNX_NAMES.get(values.dtype)
    if name is None:
        raise TypeError(f"SparseTensor values of numpy dtype {values.dtype} have no ONNX element type")
    return name


def _index_array(indices, what):
    indices = np.asarray(indices)
    if indices.dtype != np.int64:
        raise TypeError(f"SparseTensor {what} must be int64, not {indices.dtype}")
    return indices


def _check_device(ort_device):
    if ort_device is not None and ort_device.device_type() != 0:
        raise RuntimeError("nxrt keeps SparseTensor values in host memory (an OrtDevice of type cpu)")


def _read_only(array):
    """A view of `array` that cannot be written through (onnxruntime's SparseTensor views are read-only)."""
    view = array.view()
    view.flags.writeable = False
    return view


class _CooView:
    def __init__(self, indices):
        self._indices = indices

    def indices(self):
        return _read_only(self._indices)


class _CsrView:
    def __init__(self, inner, outer):
        self._inner, self._outer = inner, outer

    def inner(self):
        return _read_only(self._inner)

    def outer(self):
        return _read_only(self._outer)


class SparseTensor:
    """A sparse value: its dense shape, the non-zero values and their indices (COO: linear indices [nnz] or
    coordinates [nnz, rank]; CSR: inner (column) indices [nnz] and outer (row start) indices [rows + 1])."""

    def __init__(self, sparse_format, dense_shape, values, views):
        self._format, self._dense_shape, self._values, self._views = sparse_format, dense_shape, values, views

    @staticmethod
    def sparse_coo_from_numpy(dense_shape, values, coo_indices, ort_device=None):
        _check_device(ort_device)
        shape = [int(d) for d in dense_shape]
        values = np.asarray(values)
        indices = _index_array(coo_indices, "COO indices")
        nnz = values.shape[0] if values.ndim else 0
        _element_name(values)
        if values.ndim != 1:
            raise ValueError("SparseTensor values must be 1-D")
        if not (indices.shape == (nnz,) or indices.shape == (nnz, len(shape))):
            raise ValueError(f"COO indices of shape {list(indices.shape)} do not match {nnz} values in a "
                             f"{len(shape)}-D tensor ([nnz] or [nnz, rank])")
        total = int(np.prod(shape)) if shape else 1
        bounds = np.array(shape if indices.ndim == 2 else [total])
        if indices.size and (indices.min() < 0 or np.any(indices.reshape(nnz, -1) >= bounds)):
            raise ValueError("COO indices lie outside the dense shape")
        return SparseTensor(OrtSparseFormat.ORT_SPARSE_COO, shape, values, _CooView(indices))

    @staticmethod
    def sparse_csr_from_numpy(dense_shape, values, inner_indices, outer_indices, ort_device=None):
        _check_device(ort_device)
        shape = [int(d) for d in dense_shape]
        values = np.asarray(values)
        inner = _index_array(inner_indices, "inner indices")
        outer = _index_array(outer_indices, "outer indices")
        _element_name(values)
        if len(shape) != 2 or values.ndim != 1:
            raise ValueError("a CSR SparseTensor is 2-D with 1-D values")
        nnz = values.shape[0]
        if inner.shape != (nnz,) or outer.shape != (shape[0] + 1,):
            raise ValueError(f"CSR indices: inner must be [{nnz}] and outer [{shape[0] + 1}], got "
                             f"{list(inner.shape)} and {list(outer.shape)}")
        if (outer.size and (outer[0] != 0 or outer[-1] != nnz or np.any(np.diff(outer) < 0))) or (
                inner.size and (inner.min() < 0 or inner.max() >= shape[1])):
            raise ValueError("CSR indices do not describe the dense shape")
        return SparseTensor(OrtSparseFormat.ORT_SPARSE_CSRC, shape, values, _CsrView(inner, outer))

    def format(self):
        return self._format

    def dense_shape(self):
        return list(self._dense_shape)

    def values(self):
        return _read_only(self._values)

    def data_type(self):
        return f"sparse_tensor({_element_name(self._values)})"

    def device_name(self):
        return "cpu"

    def as_coo_view(self):
        if self._format != OrtSparseFormat.ORT_SPARSE_COO:
            raise RuntimeError(f"the SparseTensor is {self._format.name}, not COO")
        return self._views

    def as_csrc_view(self):
        if self._format != OrtSparseFormat.ORT_SPARSE_CSRC:
            raise RuntimeError(f"the SparseTensor is {self._format.name}, not CSR(C)")
        return self._views

    def as_blocksparse_view(self):
        raise RuntimeError(f"the SparseTensor is {self._format.name}, not block-sparse")

    def to_cuda(self, ort_device):
        raise RuntimeError("nxrt has no CUDA device in this build")

    def to_dense(self):
        """The dense numpy array (nxrt's own addition: what a model input takes)."""
        dense = np.zeros(self._dense_shape, dtype=self._values.dtype if self._values.dtype.kind != "U" else object)
        flat = dense.reshape(-1)
        if self._format == OrtSparseFormat.ORT_SPARSE_COO:
            indices = self._views.indices()
            linear = indices if indices.ndim == 1 else np.ravel_multi_index(tuple(indices.T), self._dense_shape)
            flat[linear] = self._values
        else:
            rows = np.repeat(np.arange(self._dense_shape[0]), np.diff(self._views.outer()))
            dense[rows, self._views.inner()] = self._values
        return dense
