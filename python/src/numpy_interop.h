// numpy <-> Tensor without copies where the layout allows. All numpy C-API use is confined to
// numpy_interop.cpp. Functions here need the GIL.
#pragma once

#include <nanobind/nanobind.h>

#include <vector>

#include "core/tensor.h"

namespace nxrt::python {

// Imports numpy's C API; called once from the module initialiser.
void init_numpy();

bool is_numpy_array(nanobind::handle object);

// Converts a numpy array, or anything numpy.asarray accepts, to a Tensor. Aligned, C-contiguous arrays in
// native byte order are wrapped without a copy; others are copied (strings always are). The Tensor does not
// own Python objects: whatever it points into is appended to `keep`, which must outlive every use of it.
// Unsupported dtypes raise TypeError naming the dtype and how to cast.
Tensor tensor_from_numpy(nanobind::handle object, std::vector<nanobind::object>& keep);

// A numpy array over the tensor's buffer. `base` (kept as the array's base) must keep the buffer alive; when
// `base` is null a capsule owning a copy of the Tensor handle is used. Strings become an object array of str
// (a copy); bfloat16 / float8 use ml_dtypes' dtypes when that package is installed (bfloat16 falls back to
// uint16 bit patterns without it).
nanobind::object numpy_from_tensor(const Tensor& tensor, nanobind::handle base = nanobind::handle());

// numpy dtype for an ONNX element type; TypeError when numpy has none.
nanobind::object numpy_dtype_of(DataType type);

// Element type of anything numpy.dtype() accepts (np.float32, "int64", ml_dtypes.bfloat16, ...).
DataType data_type_from_dtype_like(nanobind::handle dtype_like);

// Copies a numpy array element by element into a new string tensor.
Tensor string_tensor_from_numpy(nanobind::handle array);

}  // namespace nxrt::python
