// Random generators: RandomNormal, RandomUniform, RandomNormalLike, RandomUniformLike, Bernoulli, Multinomial.
// Element i draws from a counter-based stream: bits(key, i) = splitmix64 mixing of (key, i). The values depend
// only on the key and the element index, never on the thread count or partitioning. With a `seed` attribute
// the key derives from the seed, so every run of the node (in any process) produces the same values; without
// one, each run takes a fresh key from std::random_device and a process-wide counter.
// These are not numpy's generators: ONNX backend cases for random ops can only match in dtype and shape.
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

namespace {

constexpr int64_t kGrain = 8192;

uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t stream_bits(uint64_t key, uint64_t index) { return mix(key ^ mix(index)); }

// Uniform in [0, 1) with 53 random bits.
double uniform01(uint64_t key, uint64_t index) {
  return static_cast<double>(stream_bits(key, index) >> 11) * (1.0 / 9007199254740992.0);
}

// Standard normal by Box-Muller from two uniforms of element i.
double standard_normal(uint64_t key, uint64_t index) {
  const double u1 = 1.0 - uniform01(key, 2 * index);  // (0, 1]: log stays finite
  const double u2 = uniform01(key, 2 * index + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

class RandomKey {
 public:
  explicit RandomKey(const graph::Node& node) {
    if (const graph::Attribute* seed = node.find_attribute("seed")) {
      seeded_ = true;
      key_ = mix(0x5eedull ^ std::bit_cast<uint32_t>(seed->f));
    }
  }
  uint64_t for_run() const {
    if (seeded_) return key_;
    static std::atomic<uint64_t> counter{0};
    static const uint64_t process_entropy = [] {
      std::random_device device;
      return (static_cast<uint64_t>(device()) << 32) ^ device();
    }();
    return mix(process_entropy ^ mix(counter.fetch_add(1, std::memory_order_relaxed)));
  }

 private:
  bool seeded_ = false;
  uint64_t key_ = 0;
};

using RandomFloatTypes = FloatTypes;

Expected<DataType> float_dtype_attribute(const graph::Node& node, DataType fallback) {
  if (node.find_attribute("dtype") == nullptr) return fallback;
  TRY_ASSIGN(const int64_t value, node.attr_int("dtype", 1));
  const auto type = data_type_from_int(value);
  if (!type || !type_list_contains(RandomFloatTypes{}, *type)) {
    return make_error(StatusCode::kInvalidArgument, node.describe(), ": attribute dtype = ", value,
                      " is not a float type");
  }
  return *type;
}

enum class Distribution { kNormal, kUniform };

// RandomNormal / RandomUniform (fixed shape) and their *Like forms (shape of input 0). For the normal
// distribution a/b are mean/scale; for the uniform one low/high.
class RandomKernel final : public Kernel {
 public:
  RandomKernel(std::string description, RandomKey key, Distribution distribution, double a, double b, DataType dtype,
               bool like, Shape shape)
      : description_(std::move(description)), key_(key), distribution_(distribution), a_(a), b_(b), dtype_(dtype),
        like_(like), shape_(std::move(shape)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (!like_) {
      outputs.assign(1, OutputDesc{dtype_, shape_});
      return Status::ok();
    }
    if (inputs.empty() || inputs[0] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": missing input 0");
    }
    DataType type = dtype_;
    if (type == DataType::kUndefined) type = inputs[0]->dtype();
    if (!type_list_contains(RandomFloatTypes{}, type)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": output type ", data_type_name(type),
                        " is not a float type; set the dtype attribute");
    }
    outputs.assign(1, OutputDesc{type, inputs[0]->shape()});
    return Status::ok();
  }

  Status run(KernelInputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const uint64_t key = key_.for_run();
    Tensor& y = outputs[0];
    visit_dtype<RandomFloatTypes>(y.dtype(), [&]<class T>() {
      T* out = y.data<T>();
      pool.parallel_for(y.numel(), kGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const uint64_t index = static_cast<uint64_t>(i);
          const double v = distribution_ == Distribution::kNormal ? a_ + b_ * standard_normal(key, index)
                                                                   : a_ + (b_ - a_) * uniform01(key, index);
          out[i] = static_cast<T>(v);
        }
      });
    });
    return Status::ok();
  }

 private:
  std::string description_;
  RandomKey key_;
  Distribution distribution_;
  double a_;
  double b_;
  DataType dtype_;  // kUndefined for *Like without dtype: the input's type
  bool like_;
  Shape shape_;
};

template <Distribution D, bool Like>
Expected<std::unique_ptr<Kernel>> create_random(const KernelInfo& info) {
  const graph::Node& node = info.node;
  const bool normal = D == Distribution::kNormal;
  TRY_ASSIGN(const float a, node.attr_float(normal ? "mean" : "low", 0.0f));
  TRY_ASSIGN(const float b, node.attr_float(normal ? "scale" : "high", 1.0f));
  TRY_ASSIGN(const DataType dtype,
             float_dtype_attribute(node, Like ? DataType::kUndefined : DataType::kFloat32));
  Shape shape;
  if (!Like) {
    if (node.find_attribute("shape") == nullptr) {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": required attribute 'shape' is missing");
    }
    TRY_ASSIGN(shape, node.attr_ints("shape", {}));
    for (int64_t d : shape) {
      if (d < 0) {
        return make_error(StatusCode::kInvalidArgument, node.describe(), ": attribute shape ", shape_to_string(shape),
                          " has a negative dimension");
      }
    }
  }
  return std::unique_ptr<Kernel>(std::make_unique<RandomKernel>(node.describe(), RandomKey(node), D, a, b, dtype,
                                                                 Like, std::move(shape)));
}

using BernoulliOutputTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                                      uint16_t, uint32_t, uint64_t, bool>;

// y[i] = 1 with probability x[i] (probabilities outside [0, 1] are INVALID_ARGUMENT).
class BernoulliKernel final : public Kernel {
 public:
  BernoulliKernel(std::string description, RandomKey key, DataType dtype)
      : description_(std::move(description)), key_(key), dtype_(dtype) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.empty() || inputs[0] == nullptr || !type_list_contains(RandomFloatTypes{}, inputs[0]->dtype())) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 must be a float tensor");
    }
    outputs.assign(1, OutputDesc{dtype_ == DataType::kUndefined ? inputs[0]->dtype() : dtype_, inputs[0]->shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    std::vector<double> p(static_cast<size_t>(x.numel()));
    visit_dtype<RandomFloatTypes>(x.dtype(), [&]<class T>() {
      for (size_t i = 0; i < p.size(); ++i) p[i] = static_cast<double>(x.data<T>()[i]);
    });
    for (double v : p) {
      if (!(v >= 0.0 && v <= 1.0)) {
        return make_error(StatusCode::kInvalidArgument, description_, ": probability ", v, " is outside [0, 1]");
      }
    }
    const uint64_t key = key_.for_run();
    Tensor& y = outputs[0];
    visit_dtype<BernoulliOutputTypes>(y.dtype(), [&]<class T>() {
      T* out = y.data<T>();
      pool.parallel_for(y.numel(), kGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const bool one = uniform01(key, static_cast<uint64_t>(i)) < p[static_cast<size_t>(i)];
          out[i] = static_cast<T>(one ? 1.0f : 0.0f);
        }
      });
    });
    return Status::ok();
  }

 private:
  std::string description_;
  RandomKey key_;
  DataType dtype_;
};

Expected<std::unique_ptr<Kernel>> create_bernoulli(const KernelInfo& info) {
  const graph::Node& node = info.node;
  DataType dtype = DataType::kUndefined;
  if (node.find_attribute("dtype") != nullptr) {
    TRY_ASSIGN(const int64_t value, node.attr_int("dtype", 0));
    const auto type = data_type_from_int(value);
    if (!type || !type_list_contains(BernoulliOutputTypes{}, *type)) {
      return make_error(StatusCode::kInvalidArgument, node.describe(), ": attribute dtype = ", value,
                        " is not a supported output type");
    }
    dtype = *type;
  }
  return std::unique_ptr<Kernel>(std::make_unique<BernoulliKernel>(node.describe(), RandomKey(node), dtype));
}

// Input [batch, classes] of unnormalised log-probabilities; output [batch, sample_size] class indices.
class MultinomialKernel final : public Kernel {
 public:
  MultinomialKernel(std::string description, RandomKey key, DataType dtype, int64_t samples)
      : description_(std::move(description)), key_(key), dtype_(dtype), samples_(samples) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.empty() || inputs[0] == nullptr || !type_list_contains(RandomFloatTypes{}, inputs[0]->dtype()) ||
        inputs[0]->rank() != 2) {
      return make_error(StatusCode::kInvalidArgument, description_,
                        ": input 0 must be a [batch, classes] float tensor");
    }
    if (inputs[0]->shape()[1] == 0 && inputs[0]->shape()[0] > 0 && samples_ > 0) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 has no classes to sample from");
    }
    outputs.assign(1, OutputDesc{dtype_, Shape{inputs[0]->shape()[0], samples_}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    const int64_t batch = x.shape()[0];
    const int64_t classes = x.shape()[1];
    std::vector<double> logits(static_cast<size_t>(x.numel()));
    visit_dtype<RandomFloatTypes>(x.dtype(), [&]<class T>() {
      for (size_t i = 0; i < logits.size(); ++i) logits[i] = static_cast<double>(x.data<T>()[i]);
    });
    const uint64_t key = key_.for_run();
    Tensor& y = outputs[0];
    pool.parallel_for(batch, 1, [&](int64_t begin, int64_t end) {
      std::vector<double> cumulative(static_cast<size_t>(classes));
      for (int64_t b = begin; b < end; ++b) {
        const double* row = logits.data() + b * classes;
        double top = -INFINITY;
        for (int64_t c = 0; c < classes; ++c) top = std::max(top, row[c]);
        double total = 0;
        for (int64_t c = 0; c < classes; ++c) {
          total += std::isinf(top) && top < 0 ? 1.0 : std::exp(row[c] - top);
          cumulative[static_cast<size_t>(c)] = total;
        }
        for (int64_t s = 0; s < samples_; ++s) {
          const double target = uniform01(key, static_cast<uint64_t>(b * samples_ + s)) * total;
          int64_t chosen = classes - 1;
          for (int64_t c = 0; c < classes; ++c) {
            if (target < cumulative[static_cast<size_t>(c)]) {
              chosen = c;
              break;
            }
          }
          if (dtype_ == DataType::kInt32) {
            y.data<int32_t>()[b * samples_ + s] = static_cast<int32_t>(chosen);
          } else {
            y.data<int64_t>()[b * samples_ + s] = chosen;
          }
        }
      }
    });
    return Status::ok();
  }

 private:
  std::string description_;
  RandomKey key_;
  DataType dtype_;
  int64_t samples_;
};

Expected<std::unique_ptr<Kernel>> create_multinomial(const KernelInfo& info) {
  const graph::Node& node = info.node;
  TRY_ASSIGN(const int64_t dtype, node.attr_int("dtype", 6));
  TRY_ASSIGN(const int64_t samples, node.attr_int("sample_size", 1));
  if (dtype != static_cast<int64_t>(DataType::kInt32) && dtype != static_cast<int64_t>(DataType::kInt64)) {
    return make_error(StatusCode::kInvalidArgument, node.describe(), ": attribute dtype = ", dtype,
                      " must be int32 (6) or int64 (7)");
  }
  if (samples < 0) {
    return make_error(StatusCode::kInvalidArgument, node.describe(), ": attribute sample_size = ", samples,
                      " is negative");
  }
  return std::unique_ptr<Kernel>(std::make_unique<MultinomialKernel>(
      node.describe(), RandomKey(node), static_cast<DataType>(dtype), samples));
}

constexpr DataTypeMask kFloatMask = type_mask(RandomFloatTypes{});

const KernelDef kRandomKernels[] = {
    {"RandomNormal", graph::kOnnxDomain, 1, kLatestOpset, kAnyType, -1,
     create_random<Distribution::kNormal, false>},
    {"RandomUniform", graph::kOnnxDomain, 1, kLatestOpset, kAnyType, -1,
     create_random<Distribution::kUniform, false>},
    {"RandomNormalLike", graph::kOnnxDomain, 1, kLatestOpset, kAnyType, -1,
     create_random<Distribution::kNormal, true>},
    {"RandomUniformLike", graph::kOnnxDomain, 1, kLatestOpset, kAnyType, -1,
     create_random<Distribution::kUniform, true>},
    {"Bernoulli", graph::kOnnxDomain, 15, kLatestOpset, kFloatMask, 0, create_bernoulli},
    {"Multinomial", graph::kOnnxDomain, 7, kLatestOpset, kFloatMask, 0, create_multinomial},
};

}  // namespace

std::span<const KernelDef> random_kernels() { return kRandomKernels; }

}  // namespace nxrt::cpu
