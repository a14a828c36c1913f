// RotaryEmbedding (23, and com.microsoft 1), TensorScatter (24), SwiGLU (28).
// RotaryEmbedding rotates the first `rotary_embedding_dim` features of each head by (cos, sin) pairs; pairs are
// (x[i], x[i + dim/2]) or, interleaved, (x[2i], x[2i+1]). X is [B, S, N * head] or [B, N, S, head]. The caches are
// [max_position, dim/2] indexed by position_ids, or [batch, sequence, dim/2] without position_ids.
// The com.microsoft form takes (input, position_ids, cos_cache, sin_cache): position_ids are required, [B, S] or
// [1] (an offset: token s is at position offset + s), and without num_heads a 3-D input's head size is twice the
// caches' width; it computes half types in float and rounds once (ai.onnx rounds each product to the type).
// TensorScatter copies past_cache and writes `update` along `axis` at write_indices[batch] (+ sequence index,
// modulo the axis length in circular mode).
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ep/cpu/attention/attention_common.h"

namespace nxrt::cpu::attention_detail {

namespace {

class RotaryEmbeddingKernel final : public Kernel {
 public:
  RotaryEmbeddingKernel(std::string description, int64_t num_heads, int64_t rotary_dim, bool interleaved,
                        bool contrib)
      : description_(std::move(description)), num_heads_(num_heads), rotary_dim_(rotary_dim),
        interleaved_(interleaved), contrib_(contrib), cos_input_(contrib ? 2 : 1), sin_input_(contrib ? 3 : 2),
        positions_input_(contrib ? 1 : 3) {}

  struct Dims {
    bool three_d = false;
    int64_t batch = 0, heads = 0, seq = 0, head = 0, rot = 0, max_position = 0;
  };

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const Dims d, resolve(inputs));
    (void)d;
    outputs.assign(1, OutputDesc{inputs[0]->dtype(), inputs[0]->shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const Dims d, resolve(inputs));
    const Tensor* positions = optional_input(inputs, positions_input_);
    if (positions != nullptr) {
      const int64_t* p = positions->data<int64_t>();
      for (int64_t i = 0; i < positions->numel(); ++i) {
        // An offset (one value) starts the positions of every sequence: the last one is offset + S - 1.
        const bool offset = positions->numel() == 1 && contrib_;
        if (p[i] < 0 || p[i] >= d.max_position || (offset && d.seq > d.max_position - p[i])) {
          return make_error(StatusCode::kInvalidArgument, description_, ": position_ids value ", p[i],
                            offset ? " plus the sequence length" : "", " is outside [0, ", d.max_position, ")");
        }
      }
    }
    visit_dtype<FloatTypes>(inputs[0]->dtype(), [&]<class T>() { run_typed<T>(d, inputs, outputs[0], pool); });
    return Status::ok();
  }

 private:
  Expected<Dims> resolve(KernelInputs inputs) const {
    TRY(require_inputs(inputs, contrib_ ? 4 : 3, description_));
    const Tensor& x = *inputs[0];
    const Tensor& cos = *inputs[cos_input_];
    const Tensor& sin = *inputs[sin_input_];
    if (cos.dtype() != x.dtype() || sin.dtype() != x.dtype()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": cos_cache/sin_cache must have X's type");
    }
    Dims d;
    if (x.rank() == 4) {
      d.batch = x.shape()[0];
      d.heads = x.shape()[1];
      d.seq = x.shape()[2];
      d.head = x.shape()[3];
    } else if (x.rank() == 3 && contrib_ && num_heads_ <= 0) {
      // The head size is the rotated width: twice the caches' (rotary_embedding_dim then needs num_heads).
      const int64_t head = cos.rank() == 2 ? 2 * cos.shape()[1] : 0;
      if (rotary_dim_ > 0 || head <= 0 || x.shape()[2] % head != 0) {
        return make_error(StatusCode::kInvalidArgument, description_, ": without num_heads, hidden size ",
                          x.shape()[2], " must be a multiple of twice the cos_cache width (and rotary_embedding_dim",
                          " unset)");
      }
      d.three_d = true;
      d.batch = x.shape()[0];
      d.seq = x.shape()[1];
      d.head = head;
      d.heads = x.shape()[2] / head;
    } else if (x.rank() == 3) {
      d.three_d = true;
      if (num_heads_ <= 0) {
        return make_error(StatusCode::kInvalidArgument, description_, ": 3-D input needs the num_heads attribute");
      }
      if (x.shape()[2] % num_heads_ != 0) {
        return make_error(StatusCode::kInvalidArgument, description_, ": hidden size ", x.shape()[2],
                          " is not a multiple of num_heads ", num_heads_);
      }
      d.batch = x.shape()[0];
      d.seq = x.shape()[1];
      d.heads = num_heads_;
      d.head = x.shape()[2] / num_heads_;
    } else {
      return make_error(StatusCode::kInvalidArgument, description_, ": input X must be 3-D or 4-D, got rank ",
                        x.rank());
    }
    d.rot = rotary_dim_ > 0 ? rotary_dim_ : d.head;
    if (d.rot > d.head || d.rot % 2 != 0) {
      return make_error(StatusCode::kInvalidArgument, description_, ": rotary_embedding_dim ", d.rot,
                        " must be even and at most the head size ", d.head);
    }
    const Tensor* positions = optional_input(inputs, positions_input_);
    const int64_t half = d.rot / 2;
    if (positions != nullptr) {
      const bool offset = contrib_ && positions->rank() == 1 && positions->numel() == 1;
      if (positions->dtype() != DataType::kInt64 ||
          (!offset && (positions->rank() != 2 || positions->shape()[0] != d.batch ||
                       positions->shape()[1] != d.seq))) {
        return make_error(StatusCode::kInvalidArgument, description_, ": position_ids must be int64 of shape [",
                          d.batch, ", ", d.seq, "]", contrib_ ? " or [1]" : "");
      }
      if (cos.rank() != 2 || cos.shape() != sin.shape() || cos.shape()[1] != half) {
        return make_error(StatusCode::kInvalidArgument, description_,
                          ": with position_ids, cos_cache/sin_cache must be [max_position, ", half, "]");
      }
      d.max_position = cos.shape()[0];
    } else if (cos.rank() != 3 || cos.shape() != sin.shape() || cos.shape()[0] != d.batch ||
               cos.shape()[1] != d.seq || cos.shape()[2] != half) {
      return make_error(StatusCode::kInvalidArgument, description_,
                        ": without position_ids, cos_cache/sin_cache must be [batch, sequence, ", half, "]");
    }
    return d;
  }

  template <class T>
  void run_typed(const Dims& d, KernelInputs inputs, Tensor& output, ThreadPool& pool) const {
    using Acc = AccOf<T>;
    const T* x = inputs[0]->data<T>();
    const T* cos = inputs[cos_input_]->data<T>();
    const T* sin = inputs[sin_input_]->data<T>();
    const Tensor* positions = optional_input(inputs, positions_input_);
    const int64_t* pos = positions != nullptr ? positions->data<int64_t>() : nullptr;
    const bool offset = positions != nullptr && positions->rank() == 1;
    T* y = output.data<T>();
    const int64_t half = d.rot / 2;
    pool.parallel_for(d.batch * d.seq * d.heads, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, d.head)),
                      [&](int64_t begin, int64_t end) {
      for (int64_t item = begin; item < end; ++item) {
        const int64_t h = item % d.heads;
        const int64_t s = (item / d.heads) % d.seq;
        const int64_t b = item / (d.heads * d.seq);
        const int64_t at = d.three_d ? ((b * d.seq + s) * d.heads + h) * d.head : ((b * d.heads + h) * d.seq + s) * d.head;
        const int64_t cache_row = pos == nullptr ? b * d.seq + s : offset ? pos[0] + s : pos[b * d.seq + s];
        const T* c = cos + cache_row * half;
        const T* sn = sin + cache_row * half;
        const T* in = x + at;
        T* out = y + at;
        for (int64_t i = 0; i < half; ++i) {
          const int64_t i1 = interleaved_ ? 2 * i : i;
          const int64_t i2 = interleaved_ ? 2 * i + 1 : i + half;
          const Acc x1 = to_acc(in[i1]);
          const Acc x2 = to_acc(in[i2]);
          const Acc ci = to_acc(c[i]);
          const Acc si = to_acc(sn[i]);
          out[i1] = from_acc<T>(product<T>(ci, x1) - product<T>(si, x2));
          out[i2] = from_acc<T>(product<T>(si, x1) + product<T>(ci, x2));
        }
        for (int64_t i = d.rot; i < d.head; ++i) out[i] = in[i];
      }
    });
  }

  // One product of the rotation as it is rounded before the sum: to T for ai.onnx RotaryEmbedding (its function
  // body multiplies in T, as the reference does), to the compute type (float; double for double) for the
  // com.microsoft op, which computes in float and rounds once (as onnxruntime's kernel: in float16,
  // 65504 * 65504 + inf * -inf is -inf there, NaN with the products rounded to float16).
  template <class T, class Acc>
  Acc product(Acc a, Acc b) const {
    if (!contrib_) return round_as<T>(a * b);
    if constexpr (std::is_same_v<T, double>) {
      return a * b;
    } else {
      return round_as<float>(a * b);
    }
  }

  std::string description_;
  int64_t num_heads_;
  int64_t rotary_dim_;
  bool interleaved_;
  bool contrib_;
  size_t cos_input_, sin_input_, positions_input_;
};

class TensorScatterKernel final : public Kernel {
 public:
  TensorScatterKernel(std::string description, int64_t axis, bool circular)
      : description_(std::move(description)), axis_(axis), circular_(circular) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(validate(inputs).status());
    outputs.assign(1, OutputDesc{inputs[0]->dtype(), inputs[0]->shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool&) const override {
    TRY_ASSIGN(const size_t axis, validate(inputs));
    const Tensor& past = *inputs[0];
    const Tensor& update = *inputs[1];
    const Tensor* indices = optional_input(inputs, 2);
    const Shape& shape = past.shape();
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < axis; ++i) outer *= shape[i];
    for (size_t i = axis + 1; i < shape.size(); ++i) inner *= shape[i];
    const int64_t max_len = shape[axis];
    const int64_t len = update.shape()[axis];
    const int64_t per_batch = std::max<int64_t>(1, outer / std::max<int64_t>(1, shape[0]));
    const int64_t* write = indices != nullptr ? indices->data<int64_t>() : nullptr;
    for (int64_t o = 0; o < outer && len > 0; ++o) {
      const int64_t start = write != nullptr ? write[o / per_batch] : 0;
      for (int64_t s = 0; s < len; ++s) {
        int64_t target = start + s;
        if (circular_) target = ((target % max_len) + max_len) % max_len;
        if (target < 0 || target >= max_len) {
          return make_error(StatusCode::kInvalidArgument, description_, ": write index ", target,
                            " is outside the cache length ", max_len);
        }
      }
    }
    Tensor& out = outputs[0];
    const auto copy = [&]<class E>() {
      const E* src = past.data<E>();
      const E* upd = update.data<E>();
      E* dst = out.data<E>();
      for (int64_t i = 0; i < past.numel(); ++i) dst[i] = src[i];
      for (int64_t o = 0; o < outer; ++o) {
        const int64_t start = write != nullptr ? write[o / per_batch] : 0;
        for (int64_t s = 0; s < len; ++s) {
          int64_t target = start + s;
          if (circular_) target = ((target % max_len) + max_len) % max_len;
          const E* from = upd + (o * len + s) * inner;
          E* to = dst + (o * max_len + target) * inner;
          for (int64_t e = 0; e < inner; ++e) to[e] = from[e];
        }
      }
    };
    if (past.dtype() == DataType::kString) {
      copy.template operator()<std::string>();
      return Status::ok();
    }
    switch (data_type_storage_bytes(past.dtype(), 1)) {
      case 1: copy.template operator()<uint8_t>(); break;
      case 2: copy.template operator()<uint16_t>(); break;
      case 4: copy.template operator()<uint32_t>(); break;
      case 8: copy.template operator()<uint64_t>(); break;
      case 16: copy.template operator()<std::complex<double>>(); break;
      default: break;
    }
    return Status::ok();
  }

 private:
  Expected<size_t> validate(KernelInputs inputs) const {
    if (optional_input(inputs, 0) == nullptr || optional_input(inputs, 1) == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": missing past_cache or update");
    }
    const Tensor& past = *inputs[0];
    const Tensor& update = *inputs[1];
    if (update.dtype() != past.dtype()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": update type differs from past_cache");
    }
    const DataType type = past.dtype();
    if (type != DataType::kString && data_type_storage_bytes(type, 2) != 2 * data_type_storage_bytes(type, 1)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": unsupported sub-byte type ",
                        data_type_name(type));
    }
    const int64_t rank = static_cast<int64_t>(past.rank());
    if (rank < 1 || update.rank() != past.rank() || axis_ < -rank || axis_ >= rank) {
      return make_error(StatusCode::kInvalidArgument, description_, ": axis ", axis_,
                        " / update rank do not fit past_cache of rank ", rank);
    }
    const size_t axis = static_cast<size_t>(axis_ < 0 ? axis_ + rank : axis_);
    if (axis == 0) {
      return make_error(StatusCode::kInvalidArgument, description_, ": axis must not be the batch axis");
    }
    for (size_t i = 0; i < past.rank(); ++i) {
      const bool ok = i == axis ? update.shape()[i] <= past.shape()[i] : update.shape()[i] == past.shape()[i];
      if (!ok) {
        return make_error(StatusCode::kInvalidArgument, description_, ": update dimension ", i, " (",
                          update.shape()[i], ") does not fit past_cache (", past.shape()[i], ")");
      }
    }
    if (const Tensor* indices = optional_input(inputs, 2)) {
      if (indices->dtype() != DataType::kInt64 || indices->numel() != past.shape()[0]) {
        return make_error(StatusCode::kInvalidArgument, description_,
                          ": write_indices must be int64 of shape [batch]");
      }
    }
    return axis;
  }

  std::string description_;
  int64_t axis_;
  bool circular_;
};

class SwigluKernel final : public Kernel {
 public:
  SwigluKernel(std::string description, float alpha) : description_(std::move(description)), alpha_(alpha) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (optional_input(inputs, 0) == nullptr || optional_input(inputs, 1) == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": missing input A or B");
    }
    const Tensor& a = *inputs[0];
    const Tensor& b = *inputs[1];
    if (a.dtype() != b.dtype() || a.shape() != b.shape() || !type_list_contains(FloatTypes{}, a.dtype())) {
      return make_error(StatusCode::kInvalidArgument, description_,
                        ": A and B must be float tensors of identical type and shape");
    }
    outputs.assign(1, OutputDesc{a.dtype(), a.shape()});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    visit_dtype<FloatTypes>(inputs[0]->dtype(), [&]<class T>() {
      using Acc = AccOf<T>;
      const T* a = inputs[0]->data<T>();
      const T* b = inputs[1]->data<T>();
      T* y = outputs[0].data<T>();
      // The function body, each op rounded to T: Swish = Mul(X, Sigmoid(Mul(CastLike(alpha, X), X))), then
      // Mul(Swish, B). The sigmoid is one op: computed in Acc, rounded once.
      const Acc alpha = round_as<T>(static_cast<Acc>(alpha_));
      pool.parallel_for(inputs[0]->numel(), 16384, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const Acc x = to_acc(a[i]);
          const Acc scaled = round_as<T>(alpha * x);
          const Acc sigmoid = round_as<T>(Acc{1} / (Acc{1} + std::exp(-scaled)));
          y[i] = from_acc<T>(round_as<T>(x * sigmoid) * to_acc(b[i]));
        }
      });
    });
    return Status::ok();
  }

 private:
  std::string description_;
  float alpha_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> create_rotary_embedding(const KernelInfo& info) {
  const bool contrib = info.node.domain == graph::kMsDomain;
  if (contrib) {
    TRY_ASSIGN(const int64_t packed, info.node.attr_int("is_packed_batching", 0));
    if (packed != 0) {
      return make_error(StatusCode::kNotImplemented, info.node.describe(), ": is_packed_batching is not supported");
    }
  }
  TRY_ASSIGN(const int64_t num_heads, info.node.attr_int("num_heads", 0));
  TRY_ASSIGN(const int64_t rotary_dim, info.node.attr_int("rotary_embedding_dim", 0));
  TRY_ASSIGN(const int64_t interleaved, info.node.attr_int("interleaved", 0));
  if (num_heads < 0 || rotary_dim < 0) {
    return make_error(StatusCode::kInvalidGraph, info.node.describe(),
                      ": num_heads and rotary_embedding_dim must be nonnegative");
  }
  return std::unique_ptr<Kernel>(
      std::make_unique<RotaryEmbeddingKernel>(info.node.describe(), num_heads, rotary_dim, interleaved != 0, contrib));
}

Expected<std::unique_ptr<Kernel>> create_tensor_scatter(const KernelInfo& info) {
  TRY_ASSIGN(const int64_t axis, info.node.attr_int("axis", -2));
  TRY_ASSIGN(const std::string mode, info.node.attr_string("mode", "linear"));
  if (mode != "linear" && mode != "circular") {
    return make_error(StatusCode::kInvalidGraph, info.node.describe(), ": mode must be 'linear' or 'circular', got '",
                      mode, "'");
  }
  return std::unique_ptr<Kernel>(
      std::make_unique<TensorScatterKernel>(info.node.describe(), axis, mode == "circular"));
}

Expected<std::unique_ptr<Kernel>> create_swiglu(const KernelInfo& info) {
  TRY_ASSIGN(const float alpha, info.node.attr_float("alpha", 1.0f));
  return std::unique_ptr<Kernel>(std::make_unique<SwigluKernel>(info.node.describe(), alpha));
}

}  // namespace nxrt::cpu::attention_detail
