// DLPack producer (Value.__dlpack__) and consumer (inputs exposing __dlpack__).
#pragma once

#include <nanobind/nanobind.h>

#include <vector>

#include "core/tensor.h"

namespace nxrt::python {

// Calls object.__dlpack__ (asking for a versioned capsule first) and wraps the result. Contiguous CPU tensors
// are wrapped without a copy and the capsule owner is appended to `keep`; strided ones are copied.
Tensor tensor_from_dlpack(nanobind::handle object, std::vector<nanobind::object>& keep);

// A capsule for `tensor`: "dltensor_versioned" when `versioned`, "dltensor" otherwise. The capsule (and,
// once consumed, the consumer's deleter call) keeps the buffer alive through a copy of the Tensor handle.
nanobind::object dlpack_capsule(const Tensor& tensor, bool versioned, bool read_only);

}  // namespace nxrt::python
