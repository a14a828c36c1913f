// LpNormalization, LRN, MeanVarianceNormalization, Dropout.
// LpNormalization divides by the L1/L2 norm along `axis` (a zero norm gives zeros). LRN divides by
// (bias + alpha / size * sum of squares over the channel window)^beta. MeanVarianceNormalization computes
// (x - mean) / (sqrt(E[x^2] - mean^2) + 1e-9) over `axes`, as its function body does. Dropout is an identity in
// inference (mask all true); from opset 12 the training_mode input enables random dropping with scale
// 1 / (1 - ratio). Opsets before 12 always run in inference mode, as ONNX Runtime does.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "ep/cpu/tensor/data_movement.h"
#include "ep/cpu/norm/norm_common.h"

namespace nxrt::cpu::norm {

namespace {

constexpr int64_t kGrain = 16384;


// Base for single-input, same-shape float kernels.
class UnaryFloatKernel : public Kernel {
 public:
  explicit UnaryFloatKernel(std::string description) : description_(std::move(description)) {}
  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_input(inputs, 0, description_, kFloatMask, "X"));
    TRY(check(*inputs[0]));
    outputs.assign(1, OutputDesc{inputs[0]->dtype(), inputs[0]->shape()});
    return Status::ok();
  }

 protected:
  virtual Status check(const Tensor& x) const = 0;
  std::string description_;
};

class LpNormKernel final : public UnaryFloatKernel {
 public:
  LpNormKernel(std::string description, int64_t axis, int64_t p)
      : UnaryFloatKernel(std::move(description)), axis_(axis), p_(p) {}

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    if (x.numel() == 0) return Status::ok();
    TRY_ASSIGN(const int64_t axis, normalized_axis(axis_, static_cast<int64_t>(x.rank()), description_, "axis"));
    const AxisSplit s = split_at(x.shape(), static_cast<size_t>(axis));
    visit_dtype<FloatTypes>(x.dtype(), [&]<class T>() {
      const T* px = x.data<T>();
      T* py = outputs[0].data<T>();
      pool.parallel_for(s.outer * s.inner, std::max<int64_t>(1, kGrain / s.n), [&](int64_t begin, int64_t end) {
        for (int64_t item = begin; item < end; ++item) {
          const int64_t base = (item / s.inner) * s.n * s.inner + item % s.inner;
          double norm = 0;
          for (int64_t k = 0; k < s.n; ++k) {
            const double v = static_cast<double>(load(px[base + k * s.inner]));
            norm += p_ == 1 ? std::fabs(v) : v * v;
          }
          if (p_ == 2) norm = std::sqrt(norm);
          // x / norm in double: the reciprocal of a norm of subnormals overflows float (1 / 1e-45), and a
          // multiplication by it would give inf or NaN where the quotient is finite.
          for (int64_t k = 0; k < s.n; ++k) {
            const double v = static_cast<double>(load(px[base + k * s.inner]));
            py[base + k * s.inner] = store<T>(norm == 0 ? 0.0 : v / norm);
          }
        }
      });
    });
    return Status::ok();
  }

 private:
  Status check(const Tensor& x) const override {
    return normalized_axis(axis_, static_cast<int64_t>(x.rank()), description_, "axis").status();
  }
  int64_t axis_;
  int64_t p_;
};

class LrnKernel final : public UnaryFloatKernel {
 public:
  LrnKernel(std::string description, int64_t size, double alpha, double beta, double bias)
      : UnaryFloatKernel(std::move(description)), size_(size), alpha_(alpha), beta_(beta), bias_(bias) {}

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    if (x.numel() == 0) return Status::ok();
    const AxisSplit s = split_at(x.shape(), 1);
    const int64_t before = (size_ - 1) / 2;
    const int64_t after = size_ - 1 - before;
    const double coefficient = alpha_ / static_cast<double>(size_);
    visit_dtype<FloatTypes>(x.dtype(), [&]<class T>() {
      const T* px = x.data<T>();
      T* py = outputs[0].data<T>();
      pool.parallel_for(s.outer * s.inner, std::max<int64_t>(1, kGrain / (s.n * std::min(size_, s.n))),
                        [&](int64_t begin, int64_t end) {
                          for (int64_t item = begin; item < end; ++item) {
                            const int64_t base = (item / s.inner) * s.n * s.inner + item % s.inner;
                            for (int64_t c = 0; c < s.n; ++c) {
                              double sum = 0;
                              const int64_t lo = std::max<int64_t>(0, c - before);
                              const int64_t hi = std::min<int64_t>(s.n - 1, c + after);
                              for (int64_t k = lo; k <= hi; ++k) {
                                const double v = static_cast<double>(load(px[base + k * s.inner]));
                                sum += v * v;
                              }
                              const double v = static_cast<double>(load(px[base + c * s.inner]));
                              py[base + c * s.inner] = store<T>(v / std::pow(bias_ + coefficient * sum, beta_));
                            }
                          }
                        });
    });
    return Status::ok();
  }

 private:
  Status check(const Tensor& x) const override {
    if (x.rank() < 2) {
      return make_error(StatusCode::kInvalidArgument, description_,
                        ": input 0 must have rank >= 2 (N x C x ...), got ", shape_to_string(x.shape()));
    }
    return Status::ok();
  }
  int64_t size_;
  double alpha_;
  double beta_;
  double bias_;
};

class MvnKernel final : public UnaryFloatKernel {
 public:
  MvnKernel(std::string description, std::vector<int64_t> axes)
      : UnaryFloatKernel(std::move(description)), axes_(std::move(axes)) {}

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& /*pool*/) const override {
    const Tensor& x = *inputs[0];
    if (x.numel() == 0) return Status::ok();
    TRY_ASSIGN(const std::vector<bool> reduced, reduced_dims(x));
    const Shape& dims = x.shape();
    // Strides into the kept-dims statistics array; 0 on reduced dims.
    std::vector<int64_t> stat_strides(dims.size(), 0);
    int64_t stat_count = 1;
    for (size_t d = dims.size(); d-- > 0;) {
      if (!reduced[d]) {
        stat_strides[d] = stat_count;
        stat_count *= dims[d];
      }
    }
    const double per_stat = static_cast<double>(x.numel() / stat_count);
    std::vector<double> sum(static_cast<size_t>(stat_count), 0.0);
    std::vector<double> sum_sq(static_cast<size_t>(stat_count), 0.0);
    const auto for_each = [&](auto&& fn) {
      std::vector<int64_t> index(dims.size(), 0);
      int64_t stat = 0;
      for (int64_t i = 0; i < x.numel(); ++i) {
        fn(i, stat);
        for (size_t d = dims.size(); d-- > 0;) {
          ++index[d];
          stat += stat_strides[d];
          if (index[d] < dims[d]) break;
          stat -= stat_strides[d] * index[d];
          index[d] = 0;
        }
      }
    };
    visit_dtype<FloatTypes>(x.dtype(), [&]<class T>() {
      const T* px = x.data<T>();
      T* py = outputs[0].data<T>();
      for_each([&](int64_t i, int64_t stat) {
        const double v = static_cast<double>(load(px[i]));
        sum[static_cast<size_t>(stat)] += v;
        sum_sq[static_cast<size_t>(stat)] += v * v;
      });
      std::vector<double> mean(sum.size());
      std::vector<double> inv(sum.size());
      for (size_t k = 0; k < sum.size(); ++k) {
        mean[k] = sum[k] / per_stat;
        // NaN or an infinity in the set makes the variance NaN (inf - inf), which the clamp would turn into 0.
        const double var = std::isfinite(mean[k]) ? std::max(0.0, sum_sq[k] / per_stat - mean[k] * mean[k])
                                                  : std::numeric_limits<double>::quiet_NaN();
        inv[k] = 1.0 / (std::sqrt(var) + 1e-9);
      }
      for_each([&](int64_t i, int64_t stat) {
        const auto k = static_cast<size_t>(stat);
        py[i] = store<T>((static_cast<double>(load(px[i])) - mean[k]) * inv[k]);
      });
    });
    return Status::ok();
  }

 private:
  Expected<std::vector<bool>> reduced_dims(const Tensor& x) const {
    std::vector<bool> reduced(x.rank(), false);
    for (int64_t axis : axes_) {
      TRY_ASSIGN(const int64_t a, normalized_axis(axis, static_cast<int64_t>(x.rank()), description_, "axes entry"));
      if (reduced[static_cast<size_t>(a)]) {
        return make_error(StatusCode::kInvalidArgument, description_, ": axes entry ", axis, " is repeated");
      }
      reduced[static_cast<size_t>(a)] = true;
    }
    return reduced;
  }
  Status check(const Tensor& x) const override { return reduced_dims(x).status(); }
  std::vector<int64_t> axes_;
};

class DropoutKernel final : public Kernel {
 public:
  DropoutKernel(const KernelInfo& info, double ratio, bool has_seed, int64_t seed)
      : description_(info.node.describe()), opset_(info.opset()), default_ratio_(ratio), has_seed_(has_seed),
        seed_(seed), has_mask_(info.node.outputs.size() > 1 && info.node.outputs[1] != graph::kNoValue) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(require_input(inputs, 0, description_, kFloatMask, "data"));
    if (opset_ >= 12) {
      if (inputs.size() > 1 && inputs[1] != nullptr) {
        TRY(require_input(inputs, 1, description_, kFloatMask, "ratio"));
        if (inputs[1]->numel() != 1) {
          return make_error(StatusCode::kInvalidArgument, description_, ": input 1 (ratio) must be a scalar, got shape ",
                            shape_to_string(inputs[1]->shape()));
        }
      }
      if (inputs.size() > 2 && inputs[2] != nullptr) {
        TRY(require_input(inputs, 2, description_, type_mask(TypeList<bool>{}), "training_mode"));
        if (inputs[2]->numel() != 1) {
          return make_error(StatusCode::kInvalidArgument, description_,
                            ": input 2 (training_mode) must be a scalar, got shape ",
                            shape_to_string(inputs[2]->shape()));
        }
      }
    }
    const Tensor& x = *inputs[0];
    outputs.assign(1, OutputDesc{x.dtype(), x.shape()});
    outputs.push_back(OutputDesc{opset_ >= 10 ? DataType::kBool : x.dtype(), has_mask_ ? x.shape() : Shape{0}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& /*pool*/) const override {
    const Tensor& x = *inputs[0];
    double ratio = default_ratio_;
    bool training = false;
    if (opset_ >= 12) {
      if (inputs.size() > 1 && inputs[1] != nullptr) ratio = element_as_double(*inputs[1], 0);
      if (inputs.size() > 2 && inputs[2] != nullptr) training = inputs[2]->data<bool>()[0];
    }
    if (training && !(ratio >= 0 && ratio < 1)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": ratio must be in [0, 1), got ", ratio);
    }
    const int64_t n = x.numel();
    const bool has_mask_output = has_mask_ && outputs.size() > 1;
    if (!training || ratio == 0) {
      if (n > 0) std::memcpy(outputs[0].raw_data(), x.raw_data(), x.storage_bytes());
      if (has_mask_output) {
        if (outputs[1].dtype() == DataType::kBool) {
          std::fill_n(outputs[1].data<bool>(), n, true);
        } else {
          visit_dtype<FloatTypes>(outputs[1].dtype(), [&]<class T>() { std::fill_n(outputs[1].data<T>(), n, T(1.0f)); });
        }
      }
      return Status::ok();
    }
    std::mt19937_64 engine(has_seed_ ? static_cast<uint64_t>(seed_) : std::random_device{}());
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    const double scale = 1.0 / (1.0 - ratio);
    visit_dtype<FloatTypes>(x.dtype(), [&]<class T>() {
      const T* px = x.data<T>();
      T* py = outputs[0].data<T>();
      bool* mask = has_mask_output ? outputs[1].data<bool>() : nullptr;
      for (int64_t i = 0; i < n; ++i) {
        const bool keep = uniform(engine) >= ratio;
        py[i] = store<T>(keep ? static_cast<double>(load(px[i])) * scale : 0.0);
        if (mask != nullptr) mask[i] = keep;
      }
    });
    return Status::ok();
  }

 private:
  std::string description_;
  int opset_;
  double default_ratio_;
  bool has_seed_;
  int64_t seed_;
  bool has_mask_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> create_lp_norm(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t axis, info.node.attr_int("axis", -1));
  TRY_ASSIGN(const int64_t p, info.node.attr_int("p", 2));
  if (p != 1 && p != 2) {
    return make_error(StatusCode::kInvalidGraph, info.node.describe(), ": attribute p must be 1 or 2, got ", p);
  }
  return std::unique_ptr<Kernel>(std::make_unique<LpNormKernel>(info.node.describe(), axis, p));
}

Expected<std::unique_ptr<Kernel>> create_lrn(const KernelInfo& info) {
  const graph::Node& node = info.node;
  TRY_ASSIGN(const int64_t size, node.attr_int("size", 0));
  TRY_ASSIGN(const float alpha, node.attr_float("alpha", 1e-4f));
  TRY_ASSIGN(const float beta, node.attr_float("beta", 0.75f));
  TRY_ASSIGN(const float bias, node.attr_float("bias", 1.0f));
  if (size <= 0) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute size must be positive, got ", size);
  }
  return std::unique_ptr<Kernel>(std::make_unique<LrnKernel>(node.describe(), size, alpha, beta, bias));
}

Expected<std::unique_ptr<Kernel>> create_mvn(const KernelInfo& info) {
  TRY_ASSIGN(std::vector<int64_t> axes, info.node.attr_ints("axes", {0, 2, 3}));
  return std::unique_ptr<Kernel>(std::make_unique<MvnKernel>(info.node.describe(), std::move(axes)));
}

Expected<std::unique_ptr<Kernel>> create_dropout(const KernelInfo& info) {
  const graph::Node& node = info.node;
  float ratio = 0.5f;
  if (info.opset() < 12) {
    TRY_ASSIGN(ratio, node.attr_float("ratio", 0.5f));
  }
  const bool has_seed = node.find_attribute("seed") != nullptr;
  TRY_ASSIGN(const int64_t seed, node.attr_int("seed", 0));
  return std::unique_ptr<Kernel>(std::make_unique<DropoutKernel>(info, ratio, has_seed, seed));
}

}  // namespace nxrt::cpu::norm
