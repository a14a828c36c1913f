// nxrt.Value: a Tensor visible to Python (numpy view, DLPack producer), and the conversion of Python inputs
// (Value, numpy, DLPack producers such as torch / jax, array-likes) into Tensors.
#pragma once

#include <nanobind/nanobind.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"

namespace nxrt::python {

struct PyValue {
  Tensor tensor;
  // Python objects whose memory `tensor` points into. The Tensor itself never owns Python references, so
  // dropping it without the GIL (inside a run) is safe.
  std::vector<nanobind::object> keep;
};

// Zero-copy where the layout allows (contiguous, aligned, supported dtype); copies otherwise. Objects the
// tensor points into are appended to `keep`. Unsupported dtypes raise TypeError naming the dtype.
Tensor tensor_from_object(nanobind::handle object, std::vector<nanobind::object>& keep);

// Python's device names: "cpu" (the host) and "test_device" (the test execution provider's memory). Another name
// raises EPFail.
Device device_from_name(std::string_view name);
std::string python_device_name(Device device);

// `source` copied into new memory on `target` (through the test provider's data transfer when either side is its
// device). Raises the engine's error (strings cannot leave the host).
Tensor copy_to(const Tensor& source, Device target);

// A new Python nxrt.Value owning `tensor`.
nanobind::object make_value(Tensor tensor);

void register_values(nanobind::module_& m);

}  // namespace nxrt::python
