// FlexAttention (ai.onnx.preview 1): scores = (Q*sqrt(scale)) (K*sqrt(scale))^T in T1, cast to the softmax
// precision C (float for float/f16/bf16, double for double, unless softmax_precision says otherwise), then the
// optional score_mod subgraph, a plain softmax along the keys, the optional prob_mod subgraph and P*V in C.
// The modifier subgraphs run through a small sequential executor over this runtime's CPU kernels; they may only
// read their single input and their own initializers (no outer-scope values).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ep/cpu/attention_common.h"
#include "graph/shape_inference.h"

namespace nxrt::cpu::attention_detail {

namespace {

class SubgraphRunner {
 public:
  static Expected<std::unique_ptr<SubgraphRunner>> create(std::shared_ptr<const graph::Graph> graph,
                                                          const std::string& owner) {
    if (graph->inputs.size() != 1 || graph->outputs.size() != 1) {
      return make_error(StatusCode::kInvalidGraph, owner, ": modifier subgraph '", graph->name,
                        "' must have exactly one input and one output");
    }
    if (!graph->outer_scope_inputs.empty()) {
      return make_error(StatusCode::kNotImplemented, owner, ": modifier subgraph '", graph->name,
                        "' reads outer-scope values, which FlexAttention does not provide");
    }
    auto runner = std::unique_ptr<SubgraphRunner>(new SubgraphRunner());
    runner->graph_ = std::move(graph);
    const graph::Graph& g = *runner->graph_;
    for (const graph::Node& node : g.nodes) {
      const KernelDef* def = find_kernel(node.domain, node.op_type, node.opset);
      if (def == nullptr) return missing_kernel_error(node, "inside a FlexAttention modifier subgraph");
      KernelInfo info{node, {}, {}, {}};
      for (int input : node.inputs) {
        const bool present = input != graph::kNoValue;
        info.input_types.push_back(present && g.values[input].type.is_tensor() ? g.values[input].type.elem_type
                                                                               : DataType::kUndefined);
        info.constant_inputs.push_back(present ? graph::constant_value(g, input) : nullptr);
      }
      for (int output : node.outputs) {
        const bool present = output != graph::kNoValue;
        info.output_types.push_back(present && g.values[output].type.is_tensor() ? g.values[output].type.elem_type
                                                                                 : DataType::kUndefined);
      }
      TRY_ASSIGN(auto kernel, def->create(info));
      runner->kernels_.push_back(std::move(kernel));
    }
    return runner;
  }

  Expected<Tensor> run(const Tensor& input, ThreadPool& pool) const {
    const graph::Graph& g = *graph_;
    std::vector<Tensor> values(g.values.size());
    for (size_t i = 0; i < g.values.size(); ++i) {
      if (g.values[i].initializer) values[i] = *g.values[i].initializer;
    }
    values[static_cast<size_t>(g.inputs[0])] = input;
    std::vector<const Tensor*> node_inputs;
    std::vector<OutputDesc> descs;
    std::vector<Tensor> node_outputs;
    for (size_t n = 0; n < g.nodes.size(); ++n) {
      const graph::Node& node = g.nodes[n];
      const Kernel& kernel = *kernels_[n];
      node_inputs.clear();
      for (int id : node.inputs) {
        if (id != graph::kNoValue && !values[static_cast<size_t>(id)].is_valid()) {
          return make_error(StatusCode::kRuntimeException, node.describe(), ": input '", g.values[id].name,
                            "' has no value");
        }
        node_inputs.push_back(id == graph::kNoValue ? nullptr : &values[static_cast<size_t>(id)]);
      }
      descs.clear();
      TRY(kernel.reshape(node_inputs, descs));
      if (descs.size() < node.outputs.size()) {
        return make_error(StatusCode::kRuntimeException, node.describe(), ": kernel described too few outputs");
      }
      node_outputs.assign(node.outputs.size(), Tensor());
      if (const Tensor* constant = kernel.constant_output()) {
        node_outputs[0] = *constant;
      } else if (const int alias = kernel.alias_input(); alias >= 0) {
        if (static_cast<size_t>(alias) >= node_inputs.size() || node_inputs[alias] == nullptr) {
          return make_error(StatusCode::kRuntimeException, node.describe(), ": aliased input is missing");
        }
        node_outputs[0] = node_inputs[alias]->reshaped(descs[0].shape);
      } else {
        for (size_t o = 0; o < node.outputs.size(); ++o) {
          TRY_ASSIGN(node_outputs[o], Tensor::allocate(descs[o].dtype, descs[o].shape));
        }
        TRY(kernel.run(node_inputs, node_outputs, pool));
      }
      for (size_t o = 0; o < node.outputs.size(); ++o) {
        if (node.outputs[o] != graph::kNoValue) values[static_cast<size_t>(node.outputs[o])] = std::move(node_outputs[o]);
      }
    }
    Tensor result = values[static_cast<size_t>(g.outputs[0])];
    if (!result.is_valid()) return make_error(StatusCode::kRuntimeException, "modifier subgraph produced no output");
    return result;
  }

 private:
  SubgraphRunner() = default;
  std::shared_ptr<const graph::Graph> graph_;
  std::vector<std::unique_ptr<Kernel>> kernels_;
};

class FlexAttentionKernel final : public Kernel {
 public:
  FlexAttentionKernel(std::string description, float scale, DataType softmax_type,
                      std::unique_ptr<SubgraphRunner> score_mod, std::unique_ptr<SubgraphRunner> prob_mod)
      : description_(std::move(description)), scale_(scale), softmax_type_(softmax_type),
        score_mod_(std::move(score_mod)), prob_mod_(std::move(prob_mod)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY(validate(inputs));
    const Shape& q = inputs[0]->shape();
    outputs.assign(1, OutputDesc{inputs[0]->dtype(), Shape{q[0], q[1], q[2], inputs[2]->shape()[3]}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY(validate(inputs));
    Status status = Status::ok();
    visit_dtype<FloatTypes>(inputs[0]->dtype(), [&]<class T>() {
      DataType compute = softmax_type_;
      if (compute == DataType::kUndefined) compute = std::is_same_v<T, double> ? DataType::kFloat64 : DataType::kFloat32;
      visit_dtype<FloatTypes>(compute, [&]<class C>() { status = run_typed<T, C>(inputs, outputs[0], pool); });
    });
    return status;
  }

 private:
  Status validate(KernelInputs inputs) const {
    for (size_t i = 0; i < 3; ++i) {
      const Tensor* t = optional_input(inputs, i);
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

  Expected<Tensor> apply(const SubgraphRunner& mod, const Tensor& x, ThreadPool& pool, const char* name) const {
    TRY_ASSIGN(Tensor y, mod.run(x, pool));
    if (y.dtype() != x.dtype() || y.shape() != x.shape()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": ", name, " changed the shape or type from ",
                        shape_to_string(x.shape()), " to ", shape_to_string(y.shape()));
    }
    return y;
  }

  template <class T, class C>
  Status run_typed(KernelInputs inputs, Tensor& output, ThreadPool& pool) const {
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
      TRY_ASSIGN(scores, apply(*score_mod_, scores, pool, "score_mod"));
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
      TRY_ASSIGN(probs, apply(*prob_mod_, probs, pool, "prob_mod"));
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
  std::unique_ptr<SubgraphRunner> score_mod_;
  std::unique_ptr<SubgraphRunner> prob_mod_;
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
  std::unique_ptr<SubgraphRunner> mods[2];
  const char* names[2] = {"score_mod", "prob_mod"};
  for (int i = 0; i < 2; ++i) {
    const graph::Attribute* attr = node.find_attribute(names[i]);
    if (attr == nullptr) continue;
    if (attr->type != graph::Attribute::Type::kGraph || !attr->g) {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": attribute ", names[i], " must be a graph");
    }
    TRY_ASSIGN(mods[i], SubgraphRunner::create(attr->g, node.describe()));
  }
  return std::unique_ptr<Kernel>(std::make_unique<FlexAttentionKernel>(node.describe(), scale, softmax_type,
                                                                        std::move(mods[0]), std::move(mods[1])));
}

}  // namespace nxrt::cpu::attention_detail
