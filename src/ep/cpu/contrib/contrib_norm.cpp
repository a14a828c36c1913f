// com.microsoft layer norms over the last dim H, as ONNX Runtime's contrib schemas and CPU kernels define them:
//   SkipLayerNormalization(input, skip, gamma, beta?, bias?) epsilon (1e-12)
//   SkipSimplifiedLayerNormalization(input, skip, gamma, bias?) epsilon (1e-12)
//     sum = input + skip (+ bias); y = (sum - mean) / sqrt(var + eps) * gamma (+ beta), or for the simplified
//     (RMS) form sum / sqrt(mean(sum^2) + eps) * gamma. input is [B, S, H] or [T, H]; skip has input's shape, or
//     [1, S, H] / [S, H] shared by every batch entry. Outputs: output, mean and inv_std_var (float, [rows..., 1];
//     the simplified form's mean is 0), input_skip_bias_sum (input's type and shape).
//   EmbedLayerNormalization(input_ids, segment_ids?, word_embedding, position_embedding, segment_embedding?, gamma,
//     beta, mask?, position_ids?) epsilon (1e-12): sum = word[id] + position[pos] (+ segment[seg]) per token, then the
//     layer norm above. position_ids are [B, S] or [1, S] (one row for every batch entry), by default 0 .. S-1.
//     Outputs: output [B, S, H], mask_index [B] (int32: the number of ones in each mask row, 0 without a mask),
//     embedding_sum [B, S, H]. An id outside its table is INVALID_ARGUMENT naming the input and the value.
// Statistics accumulate in double; half types sum and normalize in float (the sum output is rounded once).
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "core/scratch_space.h"
#include "ep/cpu/elementwise/unary_common.h"
#include "ep/cpu/kernel.h"
#include "ep/cpu/microkernels/vector_math.h"

namespace nxrt::cpu {

namespace {

constexpr int64_t kGrain = 16384;
constexpr DataTypeMask kFloats = type_mask(FloatTypes{});

template <class T>
using ComputeOf = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class T>
ComputeOf<T> load_value(T x) {
  return static_cast<ComputeOf<T>>(unary_compute_t<T>(x));
}

template <class T, class C>
T store_value(C v) {
  if constexpr (std::is_same_v<T, C>) {
    return v;
  } else {
    return T(static_cast<float>(v));
  }
}

// A row's statistics: the RMS form's mean is 0. `in_double`: the row is normalized in double (see RowNorm).
struct RowStatistics {
  double mean = 0;
  double inv_std = 0;
  bool in_double = false;
};

// The normalization of rows of H values given their sum already in `work` (compute type): statistics in double.
// Float rows take the vector kernels' statistics (float lanes flushed into double) where they are reliable: a
// finite mean and a finite variance of at least kLeastFloatVariance, with the mean within kMostFloatOffset standard
// deviations of 0. Elsewhere (a NaN or infinity in the row, sums or squares beyond float's range, deviations whose
// float squares lose digits below float's normal range, values far from 0 next to their spread) the row is summed
// and normalized in double: a NaN row's variance is NaN (the float kernel clamps it to 0), [3e38, -3e38] has mean
// 0 and normalizes to [1, -1], [1e20, 1e20 + 1e13] to [-1, 1] (x - mean in float gives [0, 2]), and the RMS of
// [inf, -inf] is inf (its inv_std 0), as the spec's formulas give.
struct RowNorm {
  bool rms = false;
  double epsilon = 1e-12;

  static constexpr double kLeastFloatVariance = 1e-30;
  // The float normalization subtracts the mean rounded to float, off by up to 2^-24 |mean|: that error times
  // inv_std stays below 8 * 2^-24 (5e-7) of the normalized unit while |mean| <= 8 standard deviations.
  static constexpr double kMostFloatOffset = 8.0;

  template <class C>
  RowStatistics statistics(const C* work, int64_t h) const {
    if constexpr (std::is_same_v<C, float>) {
      double mean = 0;
      double variance = 0;
      vector_row_moments(work, h, &mean, &variance);
      if (std::isfinite(mean) && std::isfinite(variance) && variance >= kLeastFloatVariance) {
        if (rms) return {0.0, 1.0 / std::sqrt(variance + mean * mean + epsilon), false};
        const double inv_std = 1.0 / std::sqrt(variance + epsilon);
        if (std::abs(mean) * inv_std <= kMostFloatOffset) return {mean, inv_std, false};
      }
    }
    return statistics_in_double(work, h);
  }

  // Two passes in double: the mean, then the mean square of the deviations from it (or of the values, for RMS).
  template <class C>
  RowStatistics statistics_in_double(const C* work, int64_t h) const {
    const auto count = static_cast<double>(h);
    double mean = 0;
    if (!rms) {
      double sum = 0;
      for (int64_t i = 0; i < h; ++i) sum += static_cast<double>(work[i]);
      mean = sum / count;
    }
    double squares = 0;
    for (int64_t i = 0; i < h; ++i) {
      const double deviation = static_cast<double>(work[i]) - mean;
      squares += deviation * deviation;
    }
    return {mean, 1.0 / std::sqrt(squares / count + epsilon), true};
  }

  // y[i] = (work[i] - mean) * inv_std * gamma[i] (+ beta[i]).
  template <class T, class C>
  void normalize(const C* work, const RowStatistics& stats, const T* gamma, const T* beta, T* y, int64_t h) const {
    if (stats.in_double) {
      for (int64_t i = 0; i < h; ++i) {
        const double scale = static_cast<double>(load_value(gamma[i]));
        double v = (static_cast<double>(work[i]) - stats.mean) * stats.inv_std * scale;
        if (beta != nullptr) v += static_cast<double>(load_value(beta[i]));
        y[i] = store_value<T>(static_cast<ComputeOf<T>>(v));
      }
    } else if constexpr (std::is_same_v<T, float>) {
      vector_normalize_row(work, static_cast<float>(stats.mean), static_cast<float>(stats.inv_std), gamma, beta, y, h);
    } else {
      const C m = static_cast<C>(stats.mean);
      const C r = static_cast<C>(stats.inv_std);
      for (int64_t i = 0; i < h; ++i) {
        C v = (work[i] - m) * r * load_value(gamma[i]);
        if (beta != nullptr) v += load_value(beta[i]);
        y[i] = store_value<T>(v);
      }
    }
  }
};

// A row's compute-type buffer: the output row itself for f32 / f64 (normalized in place), else the calling
// task's scratch.
template <class T>
ComputeOf<T>* work_row(T* y_row, int64_t h) {
  if constexpr (std::is_same_v<T, ComputeOf<T>>) {
    return y_row;
  } else {
    return scratch_floats(ScratchUse::kContribNormRow, h);
  }
}

// Writes a row's statistics to the optional float outputs.
void store_statistics(std::span<Tensor> outputs, int64_t row, const RowStatistics& stats) {
  if (outputs.size() > 1 && outputs[1].numel() > row) outputs[1].data<float>()[row] = static_cast<float>(stats.mean);
  if (outputs.size() > 2 && outputs[2].numel() > row) outputs[2].data<float>()[row] = static_cast<float>(stats.inv_std);
}

Shape statistic_shape(const Shape& x) {
  Shape shape = x;
  if (!shape.empty()) shape.back() = 1;
  return shape;
}

std::vector<bool> present_outputs(const graph::Node& node) {
  std::vector<bool> present;
  for (int output : node.outputs) present.push_back(output != graph::kNoValue);
  if (present.empty()) present.push_back(true);
  return present;
}

// Checks a 1-D parameter of length h with X's type (absent and optional: fine).
Status check_row_parameter(KernelInputs inputs, size_t index, DataType dtype, int64_t h, bool required,
                           const std::string& description, const char* name) {
  const Tensor* t = optional_input(inputs, index);
  if (t == nullptr) {
    if (!required) return Status::ok();
    return make_error(StatusCode::kInvalidArgument, description, ": missing input ", index, " (", name, ")");
  }
  if (t->dtype() != dtype || t->rank() != 1 || t->shape()[0] != h) {
    return make_error(StatusCode::kInvalidArgument, description, ": ", name, " ", data_type_name(t->dtype()), " ",
                      shape_to_string(t->shape()), " must be 1-D [", h, "] of type ", data_type_name(dtype));
  }
  return Status::ok();
}

class SkipNormKernel final : public Kernel {
 public:
  SkipNormKernel(const KernelInfo& info, bool simplified, double epsilon)
      : description_(info.node.describe()), norm_{simplified, epsilon}, present_(present_outputs(info.node)),
        beta_input_(simplified ? -1 : 3), bias_input_(simplified ? 3 : 4) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(check_input_type(inputs, 0, kFloats, description_));
    TRY(check_shapes(inputs));
    // output, mean, inv_std_var, input_skip_bias_sum; absent ones get an empty shape.
    const Tensor& x = *inputs[0];
    outputs.assign(present_.size(), OutputDesc{x.dtype(), x.shape()});
    for (size_t o = 1; o < outputs.size(); ++o) {
      if (!present_[o]) outputs[o].shape = Shape{0};
      if (o == 1 || o == 2) {
        outputs[o].dtype = DataType::kFloat32;
        if (present_[o]) outputs[o].shape = statistic_shape(x.shape());
      }
    }
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    if (x.numel() == 0) return Status::ok();
    const int64_t h = x.shape().back();
    const int64_t rows = x.numel() / h;
    const int64_t skip_rows = inputs[1]->numel() / h;
    const Tensor* beta = beta_input_ >= 0 ? optional_input(inputs, static_cast<size_t>(beta_input_)) : nullptr;
    const Tensor* bias = optional_input(inputs, static_cast<size_t>(bias_input_));
    const bool want_sum = outputs.size() > 3 && present_.size() > 3 && present_[3];
    visit_dtype<FloatTypes>(x.dtype(), [&]<class T>() {
      const T* px = x.data<T>();
      const T* ps = inputs[1]->data<T>();
      const T* gamma = inputs[2]->data<T>();
      const T* pbeta = beta != nullptr ? beta->data<T>() : nullptr;
      const T* pbias = bias != nullptr ? bias->data<T>() : nullptr;
      T* py = outputs[0].data<T>();
      T* psum = want_sum ? outputs[3].data<T>() : nullptr;
      pool.parallel_for(rows, std::max<int64_t>(1, kGrain / h), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const T* xr = px + r * h;
          const T* sr = ps + (r % skip_rows) * h;
          T* yr = py + r * h;
          auto* work = work_row(yr, h);
          for (int64_t i = 0; i < h; ++i) work[i] = load_value(xr[i]) + load_value(sr[i]);
          if (pbias != nullptr) {
            for (int64_t i = 0; i < h; ++i) work[i] += load_value(pbias[i]);
          }
          if (psum != nullptr) {
            for (int64_t i = 0; i < h; ++i) psum[r * h + i] = store_value<T>(work[i]);
          }
          const auto stats = norm_.statistics(work, h);
          store_statistics(outputs, r, stats);
          norm_.normalize(work, stats, gamma, pbeta, yr, h);
        }
      });
    });
    return Status::ok();
  }

 private:
  Status check_shapes(KernelInputs inputs) const {
    TRY(require_inputs(inputs, 3, description_));
    const Tensor& x = *inputs[0];
    const Tensor& skip = *inputs[1];
    if (x.rank() != 2 && x.rank() != 3) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input must be 3-D [B, S, H] or 2-D [T, H], got ",
                        shape_to_string(x.shape()));
    }
    const int64_t h = x.shape().back();
    const Shape& s = skip.shape();
    const bool same = s == x.shape();
    const bool shared = x.rank() == 3 && ((s.size() == 3 && s[0] == 1 && s[1] == x.shape()[1] && s[2] == h) ||
                                          (s.size() == 2 && s[0] == x.shape()[1] && s[1] == h));
    if (skip.dtype() != x.dtype() || !(same || shared)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": skip ", data_type_name(skip.dtype()), " ",
                        shape_to_string(s), " must have input's type and shape ", shape_to_string(x.shape()),
                        ", or [1, S, H] / [S, H]");
    }
    if (h == 0 && x.numel() != 0) {
      return make_error(StatusCode::kInvalidArgument, description_, ": hidden size is 0");
    }
    TRY(check_row_parameter(inputs, 2, x.dtype(), h, true, description_, "gamma"));
    if (beta_input_ >= 0) {
      TRY(check_row_parameter(inputs, static_cast<size_t>(beta_input_), x.dtype(), h, false, description_, "beta"));
    }
    return check_row_parameter(inputs, static_cast<size_t>(bias_input_), x.dtype(), h, false, description_, "bias");
  }

  std::string description_;
  RowNorm norm_;
  std::vector<bool> present_;
  int beta_input_;
  int bias_input_;
};

class EmbedNormKernel final : public Kernel {
 public:
  EmbedNormKernel(const KernelInfo& info, double epsilon)
      : description_(info.node.describe()), norm_{false, epsilon}, present_(present_outputs(info.node)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(check_shapes(inputs));
    const Shape& ids = inputs[0]->shape();
    const int64_t h = inputs[2]->shape()[1];
    const DataType dtype = inputs[2]->dtype();
    outputs.assign(present_.size(), OutputDesc{});
    outputs[0] = OutputDesc{dtype, Shape{ids[0], ids[1], h}};
    if (outputs.size() > 1) outputs[1] = OutputDesc{DataType::kInt32, present_[1] ? Shape{ids[0]} : Shape{0}};
    if (outputs.size() > 2) outputs[2] = OutputDesc{dtype, present_[2] ? Shape{ids[0], ids[1], h} : Shape{0}};
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& ids = *inputs[0];
    const int64_t batch = ids.shape()[0];
    const int64_t seq = ids.shape()[1];
    const Tensor* segment_ids = optional_input(inputs, 1);
    const Tensor& words = *inputs[2];
    const Tensor& positions = *inputs[3];
    const Tensor* segments = optional_input(inputs, 4);
    const Tensor* mask = optional_input(inputs, 7);
    const Tensor* position_ids = optional_input(inputs, 8);
    const int64_t h = words.shape()[1];
    TRY(check_ids(&ids, words.shape()[0], "input_ids"));
    TRY(check_ids(position_ids, positions.shape()[0], "position_ids"));
    if (position_ids == nullptr && seq > positions.shape()[0]) {
      return make_error(StatusCode::kInvalidArgument, description_, ": sequence length ", seq,
                        " exceeds the position_embedding rows ", positions.shape()[0]);
    }
    if (segments != nullptr) TRY(check_ids(segment_ids, segments->shape()[0], "segment_ids"));
    if (outputs.size() > 1 && present_[1]) {
      int32_t* mask_index = outputs[1].data<int32_t>();
      for (int64_t b = 0; b < batch; ++b) {
        int32_t count = 0;
        if (mask != nullptr) {
          const int32_t* row = mask->data<int32_t>() + b * seq;
          for (int64_t s = 0; s < seq; ++s) count += row[s] == 1 ? 1 : 0;
        }
        mask_index[b] = count;
      }
    }
    if (batch * seq == 0 || h == 0) return Status::ok();
    const bool want_sum = outputs.size() > 2 && present_[2];
    const int64_t position_rows = position_ids != nullptr ? position_ids->shape()[0] : 0;
    visit_dtype<FloatTypes>(words.dtype(), [&]<class T>() {
      const int32_t* pid = ids.data<int32_t>();
      const int32_t* psid = segment_ids != nullptr && segments != nullptr ? segment_ids->data<int32_t>() : nullptr;
      const int32_t* ppos = position_ids != nullptr ? position_ids->data<int32_t>() : nullptr;
      const T* word_table = words.data<T>();
      const T* position_table = positions.data<T>();
      const T* segment_table = psid != nullptr ? segments->data<T>() : nullptr;
      const T* gamma = inputs[5]->data<T>();
      const T* beta = inputs[6]->data<T>();
      T* py = outputs[0].data<T>();
      T* psum = want_sum ? outputs[2].data<T>() : nullptr;
      pool.parallel_for(batch * seq, std::max<int64_t>(1, kGrain / h), [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
          const int64_t s = t % seq;
          const int64_t position = ppos == nullptr ? s : ppos[(position_rows == 1 ? 0 : t / seq) * seq + s];
          const T* word = word_table + static_cast<int64_t>(pid[t]) * h;
          const T* pos = position_table + position * h;
          T* yr = py + t * h;
          auto* work = work_row(yr, h);
          for (int64_t i = 0; i < h; ++i) work[i] = load_value(word[i]) + load_value(pos[i]);
          if (segment_table != nullptr) {
            const T* seg = segment_table + static_cast<int64_t>(psid[t]) * h;
            for (int64_t i = 0; i < h; ++i) work[i] += load_value(seg[i]);
          }
          if (psum != nullptr) {
            for (int64_t i = 0; i < h; ++i) psum[t * h + i] = store_value<T>(work[i]);
          }
          const auto stats = norm_.statistics(work, h);
          norm_.normalize(work, stats, gamma, beta, yr, h);
        }
      });
    });
    return Status::ok();
  }

 private:
  Status check_ids(const Tensor* ids, int64_t rows, const char* name) const {
    if (ids == nullptr) return Status::ok();
    const int32_t* p = ids->data<int32_t>();
    for (int64_t i = 0; i < ids->numel(); ++i) {
      if (p[i] < 0 || p[i] >= rows) {
        return make_error(StatusCode::kInvalidArgument, description_, ": ", name, " value ", p[i],
                          " is outside its embedding table [0, ", rows, ")");
      }
    }
    return Status::ok();
  }

  Status check_int_ids(const Tensor* t, const Shape& ids, bool one_row_allowed, const char* name) const {
    if (t == nullptr) return Status::ok();
    const bool one_row = one_row_allowed && t->rank() == 2 && t->shape()[0] == 1 && t->shape()[1] == ids[1];
    if (t->dtype() != DataType::kInt32 || !(t->shape() == ids || one_row)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": ", name, " ", data_type_name(t->dtype()), " ",
                        shape_to_string(t->shape()), " must be int32 ", shape_to_string(ids),
                        one_row_allowed ? " or [1, S]" : "");
    }
    return Status::ok();
  }

  Status check_table(const Tensor* t, DataType dtype, int64_t h, const char* name) const {
    if (t == nullptr) return Status::ok();
    if (t->dtype() != dtype || t->rank() != 2 || t->shape()[1] != h) {
      return make_error(StatusCode::kInvalidArgument, description_, ": ", name, " ", data_type_name(t->dtype()), " ",
                        shape_to_string(t->shape()), " must be 2-D [rows, ", h, "] of type ", data_type_name(dtype));
    }
    return Status::ok();
  }

  Status check_shapes(KernelInputs inputs) const {
    for (size_t i : {0u, 2u, 3u, 5u, 6u}) {
      if (optional_input(inputs, i) == nullptr) {
        return make_error(StatusCode::kInvalidArgument, description_, ": missing input ", i);
      }
    }
    const Tensor& ids = *inputs[0];
    if (ids.dtype() != DataType::kInt32 || ids.rank() != 2) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input_ids ", data_type_name(ids.dtype()), " ",
                        shape_to_string(ids.shape()), " must be int32 [B, S]");
    }
    const Tensor& words = *inputs[2];
    if (!mask_has(kFloats, words.dtype()) || words.rank() != 2) {
      return make_error(StatusCode::kInvalidArgument, description_, ": word_embedding ",
                        data_type_name(words.dtype()), " ", shape_to_string(words.shape()),
                        " must be a float 2-D table");
    }
    const int64_t h = words.shape()[1];
    const DataType dtype = words.dtype();
    TRY(check_table(inputs[3], dtype, h, "position_embedding"));
    TRY(check_table(optional_input(inputs, 4), dtype, h, "segment_embedding"));
    TRY(check_row_parameter(inputs, 5, dtype, h, true, description_, "gamma"));
    TRY(check_row_parameter(inputs, 6, dtype, h, true, description_, "beta"));
    TRY(check_int_ids(optional_input(inputs, 1), ids.shape(), false, "segment_ids"));
    TRY(check_int_ids(optional_input(inputs, 7), ids.shape(), false, "mask"));
    TRY(check_int_ids(optional_input(inputs, 8), ids.shape(), true, "position_ids"));
    if ((optional_input(inputs, 1) == nullptr) != (optional_input(inputs, 4) == nullptr)) {
      return make_error(StatusCode::kInvalidArgument, description_,
                        ": segment_ids and segment_embedding must be given together");
    }
    return Status::ok();
  }

  std::string description_;
  RowNorm norm_;
  std::vector<bool> present_;
};

Expected<double> epsilon_of(const KernelInfo& info) {
  TRY_ASSIGN(const float epsilon, info.node.attr_float("epsilon", 1e-12f));
  if (!(epsilon >= 0.0f) || !std::isfinite(epsilon)) {
    return make_error(StatusCode::kInvalidArgument, info.node.describe(),
                      ": attribute epsilon must be finite and >= 0, got ", epsilon);
  }
  return static_cast<double>(epsilon);
}

Expected<std::unique_ptr<Kernel>> create_skip_layer_norm(const KernelInfo& info) {
  TRY_ASSIGN(const double epsilon, epsilon_of(info));
  return std::unique_ptr<Kernel>(std::make_unique<SkipNormKernel>(info, false, epsilon));
}

Expected<std::unique_ptr<Kernel>> create_skip_simplified_layer_norm(const KernelInfo& info) {
  TRY_ASSIGN(const double epsilon, epsilon_of(info));
  return std::unique_ptr<Kernel>(std::make_unique<SkipNormKernel>(info, true, epsilon));
}

Expected<std::unique_ptr<Kernel>> create_embed_layer_norm(const KernelInfo& info) {
  TRY_ASSIGN(const double epsilon, epsilon_of(info));
  return std::unique_ptr<Kernel>(std::make_unique<EmbedNormKernel>(info, epsilon));
}

const KernelDef kContribNormKernels[] = {
    {"SkipLayerNormalization", graph::kMsDomain, 1, kLatestOpset, kFloats, 0, create_skip_layer_norm},
    {"SkipSimplifiedLayerNormalization", graph::kMsDomain, 1, kLatestOpset, kFloats, 0,
     create_skip_simplified_layer_norm},
    {"EmbedLayerNormalization", graph::kMsDomain, 1, kLatestOpset, kFloats, 2, create_embed_layer_norm},
};

}  // namespace

std::span<const KernelDef> contrib_norm_kernels() { return kContribNormKernels; }

}  // namespace nxrt::cpu
