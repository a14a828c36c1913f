// FlexAttention (ai.onnx.preview 1): scores = (Q*sqrt(scale)) (K*sqrt(scale))^T in T1, cast to the softmax
// precision C (float for float/f16/bf16, double for double, unless softmax_precision says otherwise), then the
// optional score_mod subgraph, a plain softmax along the keys, the optional prob_mod subgraph and P*V in C.
// The modifier subgraphs (one input, one output of the input's shape and type) run through the session like
// any control-flow body, so they may also read outer-scope values.
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ep/cpu/attention/attention_common.h"
#include "ep/cpu/control/control_flow.h"

namespace nxrt::cpu::attention_detail {

namespace {

// A value kernel because its modifiers are subgraphs; inputs are Q, K, V, then the modifiers' outer-scope reads.
class FlexAttentionKernel final : public ValueKernel {
 public:
  FlexAttentionKernel(std::string description, float scale, DataType softmax_type, size_t explicit_count,
                      std::optional<BoundSubgraph> score_mod, std::optional<BoundSubgraph> prob_mod)
      : description_(std::move(description)), scale_(scale), softmax_type_(softmax_type),
        explicit_count_(explicit_count), score_mod_(std::move(score_mod)), prob_mod_(std::move(prob_mod)) {}

  Status run_values(std::span<const Value* const> values, std::span<Value> outputs, RunContext& ctx) const override {
    const Tensor* inputs[3] = {};
    for (size_t i = 0; i < 3 && i < explicit_count_; ++i) {
      if (values[i] && values[i]->is_tensor()) inputs[i] = &values[i]->tensor();
    }
    TRY(validate(inputs));
    const Shape& q = inputs[0]->shape();
    TRY_ASSIGN(Tensor output, Tensor::allocate(inputs[0]->dtype(), Shape{q[0], q[1], q[2], inputs[2]->shape()[3]}));
    Status status = Status::ok();
    visit_dtype<FloatTypes>(inputs[0]->dtype(), [&]<class T>() {
      DataType compute = softmax_type_;
      if (compute == DataType::kUndefined) compute = std::is_same_v<T, double> ? DataType::kFloat64 : DataType::kFloat32;
      visit_dtype<FloatTypes>(compute, [&]<class C>() { status = run_typed<T, C>(inputs, values, output, ctx); });
    });
    TRY(status);
    outputs[0] = std::move(output);
    return Status::ok();
  }

 private:
  Status validate(std::span<const Tensor* const> inputs) const {
    for (size_t i = 0; i < 3; ++i) {
      const Tensor* t = inputs[i];
      if (t == nullptr || t->rank() != 4 || !type_list_contains(FloatTypes{}, t->dtype()) ||
          t->dtype() != inputs[0]->dtype()) {
        return make_error(StatusCode::kInvalidArgument, description_,
                          ": Q, K, V must be rank-4 tensors of one float type");
      }
    }
    const Shape& q = inputs[0]->shape();
    const Shape& k = inputs[1]->shape();
    const Shape& v = inputs[2]->shape();
    if (k[0] != q[0] || v[0] != q[0] || k[3] != q[3] || v[1] != k[1] || v[2] != k[2] || k[1] <= 0 ||
        q[1] % k[1] != 0) {
      return make_error(StatusCode::kInvalidArgument, description_, ": incompatible shapes Q ", shape_to_string(q),
                        ", K ", shape_to_string(k), ", V ", shape_to_string(v));
    }
    return Status::ok();
  }

  Expected<Tensor> apply(const BoundSubgraph& mod, const Tensor& x, std::span<const Value* const> values,
                         RunContext& ctx, const char* name) const {
    const Value input(x);
    const Value* feeds[1] = {&input};
    std::vector<Value> results;
    TRY(ctx.run_subgraph(*mod.compiled, feeds, mod.outer_values(values, explicit_count_), results));
    if (results.empty() || !results[0].is_tensor()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": ", name, " did not produce a tensor");
    }
    Tensor y = std::move(results[0].tensor());
    if (y.dtype() != x.dtype() || y.shape() != x.shape()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": ", name, " changed the shape or type from ",
                        shape_to_string(x.shape()), " to ", shape_to_string(y.shape()));
    }
    return y;
  }

  template <class T, class C>
  Status run_typed(std::span<const Tensor* const> inputs, std::span<const Value* const> values, Tensor& output,
                   RunContext& ctx) const {
    ThreadPool& pool = ctx.pool();
    using A = AccOf<T>;
    using CA = AccOf<C>;
    const Shape& qs = inputs[0]->shape();
    const int64_t B = qs[0], Hq = qs[1], L = qs[2], E = qs[3];
    const int64_t Hkv = inputs[1]->shape()[1], S = inputs[1]->shape()[2], Ev = inputs[2]->shape()[3];
    const int64_t group = Hq / Hkv;
    const float scale = scale_ != 0.0f ? scale_ : static_cast<float>(1.0 / std::sqrt(static_cast<double>(E)));
    const A sqrt_scale = round_as<T>(static_cast<A>(std::sqrt(scale)));
    const T* q = inputs[0]->data<T>();
    const T* k = inputs[1]->data<T>();
    const T* v = inputs[2]->data<T>();
    TRY_ASSIGN(Tensor scores, Tensor::allocate(data_type_of<C>, Shape{B, Hq, L, S}));
    pool.parallel_for(B * Hq, 1, [&](int64_t begin, int64_t end) {
      std::vector<A> qa(static_cast<size_t>(L * E)), ka(static_cast<size_t>(S * E)), sa(static_cast<size_t>(L * S));
      for (int64_t item = begin; item < end; ++item) {
        const int64_t b = item / Hq, h = item % Hq;
        const T* qh = q + item * L * E;
        const T* kh = k + (b * Hkv + h / group) * S * E;
        for (size_t i = 0; i < qa.size(); ++i) qa[i] = round_as<T>(to_acc(qh[i]) * sqrt_scale);
        for (size_t i = 0; i < ka.size(); ++i) ka[i] = round_as<T>(to_acc(kh[i]) * sqrt_scale);
        if (L > 0 && S > 0 && E > 0) {
          gemm(GemmArgs{false, true, L, S, E, E, E, S}, qa.data(), ka.data(), sa.data(), pool);
        } else {
          std::fill(sa.begin(), sa.end(), A{0});
        }
        C* out = scores.data<C>() + item * L * S;
        for (size_t i = 0; i < sa.size(); ++i) out[i] = from_acc<C>(static_cast<CA>(round_as<T>(sa[i])));
      }
    });
    if (score_mod_) {
      TRY_ASSIGN(scores, apply(*score_mod_, scores, values, ctx, "score_mod"));
    }
    TRY_ASSIGN(Tensor probs, Tensor::allocate(data_type_of<C>, Shape{B, Hq, L, S}));
    const C* sp = scores.data<C>();
    C* pp = probs.data<C>();
    for (int64_t row = 0; row < B * Hq * L; ++row) {
      const C* x = sp + row * S;
      C* p = pp + row * S;
      CA m = -std::numeric_limits<CA>::infinity();
      for (int64_t j = 0; j < S; ++j) m = std::max(m, to_acc(x[j]));
      CA sum{0};
      for (int64_t j = 0; j < S; ++j) sum += round_as<C>(std::exp(round_as<C>(to_acc(x[j]) - m)));
      sum = round_as<C>(sum);
      for (int64_t j = 0; j < S; ++j) p[j] = from_acc<C>(round_as<C>(std::exp(round_as<C>(to_acc(x[j]) - m))) / sum);
    }
    if (prob_mod_) {
      TRY_ASSIGN(probs, apply(*prob_mod_, probs, values, ctx, "prob_mod"));
    }
    const C* pr = probs.data<C>();
    T* y = output.data<T>();
    pool.parallel_for(B * Hq, 1, [&](int64_t begin, int64_t end) {
      std::vector<CA> pa(static_cast<size_t>(L * S)), va(static_cast<size_t>(S * Ev)), ya(static_cast<size_t>(L * Ev));
      for (int64_t item = begin; item < end; ++item) {
        const int64_t b = item / Hq, h = item % Hq;
        const T* vh = v + (b * Hkv + h / group) * S * Ev;
        for (size_t i = 0; i < pa.size(); ++i) pa[i] = to_acc(pr[item * L * S + static_cast<int64_t>(i)]);
        for (size_t i = 0; i < va.size(); ++i) va[i] = round_as<C>(static_cast<CA>(to_acc(vh[i])));
        if (L > 0 && Ev > 0 && S > 0) {
          gemm(GemmArgs{false, false, L, Ev, S, S, Ev, Ev}, pa.data(), va.data(), ya.data(), pool);
        } else {
          std::fill(ya.begin(), ya.end(), CA{0});
        }
        T* out = y + item * L * Ev;
        for (size_t i = 0; i < ya.size(); ++i) out[i] = from_acc<T>(static_cast<A>(round_as<C>(ya[i])));
      }
    });
    return Status::ok();
  }

  std::string description_;
  float scale_;
  DataType softmax_type_;
  size_t explicit_count_;
  std::optional<BoundSubgraph> score_mod_;
  std::optional<BoundSubgraph> prob_mod_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> create_flex_attention(const KernelInfo& info) {
  const graph::Node& node = info.node;
  TRY_ASSIGN(const float scale, node.attr_float("scale", 0.0f));
  TRY_ASSIGN(const int64_t precision, node.attr_int("softmax_precision", 0));
  DataType softmax_type = DataType::kUndefined;
  switch (precision) {
    case 0: break;
    case 1: softmax_type = DataType::kFloat32; break;
    case 10: softmax_type = DataType::kFloat16; break;
    case 11: softmax_type = DataType::kFloat64; break;
    case 16: softmax_type = DataType::kBFloat16; break;
    default:
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": softmax_precision ", precision,
                        " is not one of 1, 10, 11, 16");
  }
  std::optional<BoundSubgraph> mods[2];
  const char* names[2] = {"score_mod", "prob_mod"};
  for (int i = 0; i < 2; ++i) {
    if (node.find_attribute(names[i]) == nullptr) continue;
    TRY_ASSIGN(mods[i], bind_subgraph(info, names[i]));
    if (mods[i]->graph().inputs.size() != 1 || mods[i]->graph().outputs.size() != 1) {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": modifier subgraph '", names[i],
                        "' must have exactly one input and one output");
    }
  }
  return std::unique_ptr<Kernel>(std::make_unique<FlexAttentionKernel>(
      node.describe(), scale, softmax_type, node.inputs.size(), std::move(mods[0]), std::move(mods[1])));
}

}  // namespace nxrt::cpu::attention_detail
