// Linear-algebra kernels: Det (batched determinant by LU factorisation with partial pivoting) and com.microsoft
// Inverse (batched matrix inverse by Gauss-Jordan elimination with partial pivoting; a singular matrix gives
// infinities or NaN, as a division by its zero pivot does).
// Every float type is factorised in double: the extra precision costs little at the sizes Det sees.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

namespace {

using DetTypes = TypeList<float, double, Float16, BFloat16>;

// Determinant of the n x n row-major matrix in `a` (destroyed). A zero pivot column gives 0; NaN propagates.
double lu_determinant(double* a, int64_t n) {
  double det = 1.0;
  for (int64_t col = 0; col < n; ++col) {
    int64_t pivot = col;
    double best = std::fabs(a[col * n + col]);
    for (int64_t r = col + 1; r < n; ++r) {
      const double v = std::fabs(a[r * n + col]);
      if (v > best) {
        best = v;
        pivot = r;
      }
    }
    if (pivot != col) {
      std::swap_ranges(a + pivot * n, a + pivot * n + n, a + col * n);
      det = -det;
    }
    const double diag = a[col * n + col];
    det *= diag;
    if (diag == 0.0) return det;
    for (int64_t r = col + 1; r < n; ++r) {
      const double factor = a[r * n + col] / diag;
      if (factor == 0.0) continue;
      for (int64_t c = col + 1; c < n; ++c) a[r * n + c] -= factor * a[col * n + c];
    }
  }
  return det;
}

template <class T>
double to_double(T value) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) return static_cast<float>(value);
  return static_cast<double>(value);
}

// IEEE rounding: out-of-range values become infinities.
template <class T>
T from_double(double value) {
  if constexpr (std::is_same_v<T, double>) return value;
  constexpr double kMax = std::numeric_limits<float>::max();
  const float narrowed = value > kMax ? std::numeric_limits<float>::infinity()
                         : value < -kMax ? -std::numeric_limits<float>::infinity()
                                         : static_cast<float>(value);
  if constexpr (std::is_same_v<T, float>) return narrowed;
  return T(narrowed);
}

class DetKernel final : public Kernel {
 public:
  explicit DetKernel(std::string description) : description_(std::move(description)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.empty() || inputs[0] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": missing input 0");
    }
    const Tensor& x = *inputs[0];
    if (!type_list_contains(DetTypes{}, x.dtype())) {
      return make_error(StatusCode::kNotImplemented, description_, ": input 0 type ", data_type_name(x.dtype()),
                        " is not supported");
    }
    const size_t rank = x.rank();
    if (rank < 2 || x.shape()[rank - 1] != x.shape()[rank - 2]) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 shape ", shape_to_string(x.shape()),
                        " must be [*, M, M]");
    }
    outputs.assign(1, OutputDesc{x.dtype(), Shape(x.shape().begin(), x.shape().end() - 2)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    const int64_t n = x.shape().back();
    const int64_t batches = outputs[0].numel();
    if (batches == 0) return Status::ok();
    const int64_t size = n * n;
    visit_dtype<DetTypes>(x.dtype(), [&]<class T>() {
      const T* src = x.data<T>();
      T* dst = outputs[0].data<T>();
      const int64_t work = std::max<int64_t>(1, size * n);
      pool.parallel_for(batches, std::max<int64_t>(1, 16384 / work), [&](int64_t begin, int64_t end) {
        std::vector<double> scratch(static_cast<size_t>(size));
        for (int64_t b = begin; b < end; ++b) {
          const T* m = src + b * size;
          for (int64_t i = 0; i < size; ++i) scratch[static_cast<size_t>(i)] = to_double(m[i]);
          dst[b] = from_double<T>(lu_determinant(scratch.data(), n));
        }
      });
    });
    return Status::ok();
  }

 private:
  std::string description_;
};

// Inverse of the n x n row-major matrix in `a` (destroyed) into `inverse`.
void gauss_jordan_inverse(double* a, double* inverse, int64_t n) {
  for (int64_t i = 0; i < n * n; ++i) inverse[i] = i % (n + 1) == 0 ? 1.0 : 0.0;
  for (int64_t col = 0; col < n; ++col) {
    int64_t pivot = col;
    for (int64_t r = col + 1; r < n; ++r) {
      if (std::abs(a[r * n + col]) > std::abs(a[pivot * n + col])) pivot = r;
    }
    if (pivot != col) {
      for (int64_t j = 0; j < n; ++j) {
        std::swap(a[col * n + j], a[pivot * n + j]);
        std::swap(inverse[col * n + j], inverse[pivot * n + j]);
      }
    }
    const double scale = 1.0 / a[col * n + col];
    for (int64_t j = 0; j < n; ++j) {
      a[col * n + j] *= scale;
      inverse[col * n + j] *= scale;
    }
    for (int64_t r = 0; r < n; ++r) {
      const double factor = a[r * n + col];
      if (r == col || factor == 0.0) continue;
      for (int64_t j = 0; j < n; ++j) {
        a[r * n + j] -= factor * a[col * n + j];
        inverse[r * n + j] -= factor * inverse[col * n + j];
      }
    }
  }
}

class InverseKernel final : public Kernel {
 public:
  explicit InverseKernel(std::string description) : description_(std::move(description)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_inputs(inputs, 1, description_));
    const Tensor& x = *inputs[0];
    const size_t rank = x.rank();
    if (rank < 2 || x.shape()[rank - 1] != x.shape()[rank - 2]) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 shape ", shape_to_string(x.shape()),
                        " must be [*, M, M]");
    }
    outputs.assign(1, OutputDesc{x.dtype(), x.shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    const int64_t n = x.shape().back();
    const int64_t size = n * n;
    if (size == 0) return Status::ok();
    const int64_t batches = x.numel() / size;
    visit_dtype<TypeList<float, double, Float16>>(x.dtype(), [&]<class T>() {
      const T* src = x.data<T>();
      T* dst = outputs[0].data<T>();
      pool.parallel_for(batches, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, size * n)),
                        [&](int64_t begin, int64_t end) {
        std::vector<double> work(static_cast<size_t>(2 * size));
        for (int64_t b = begin; b < end; ++b) {
          for (int64_t i = 0; i < size; ++i) work[static_cast<size_t>(i)] = to_double(src[b * size + i]);
          gauss_jordan_inverse(work.data(), work.data() + size, n);
          for (int64_t i = 0; i < size; ++i) dst[b * size + i] = from_double<T>(work[static_cast<size_t>(size + i)]);
        }
      });
    });
    return Status::ok();
  }

 private:
  std::string description_;
};

Expected<std::unique_ptr<Kernel>> create_inverse(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(std::make_unique<InverseKernel>(info.node.describe()));
}

Expected<std::unique_ptr<Kernel>> create_det(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(std::make_unique<DetKernel>(info.node.describe()));
}

const KernelDef kLinalgKernels[] = {
    {"Det", graph::kOnnxDomain, 11, kLatestOpset, type_mask(DetTypes{}), 0, create_det},
    {"Inverse", graph::kMsDomain, 1, kLatestOpset, type_mask(TypeList<float, double, Float16>{}), 0, create_inverse},
};

}  // namespace

std::span<const KernelDef> linalg_kernels() { return kLinalgKernels; }

}  // namespace nxrt::cpu
