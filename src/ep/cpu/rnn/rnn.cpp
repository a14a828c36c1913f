// RNN, GRU, LSTM (all opsets). One kernel runs the three cells:
//   gates are packed as in the ONNX weights: RNN [i], GRU [z, r, h], LSTM [i, o, f, c]; peepholes P are [i, o, f].
// X*W^T (+ both biases where they are purely additive) is computed for every step at once with the GEMM, then
// each step adds H_{t-1}*R^T. Layout 0 is [seq, batch, ...], layout 1 is [batch, seq, ...]. Steps at or past
// sequence_lens[b] leave the state unchanged and write zeros to Y, so Y_h/Y_c hold the last valid step.
// f16/bf16 compute in float.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ep/cpu/microkernels/gemm.h"
#include "ep/cpu/microkernels/vector_math.h"
#include "ep/cpu/kernel.h"
#include "ep/cpu/run_limits.h"

namespace nxrt::cpu {

namespace {

enum class Cell { kRnn, kGru, kLstm };

enum class ActKind { kRelu, kTanh, kSigmoid, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh, kHardSigmoid,
                     kElu, kSoftsign, kSoftplus };

struct Activation {
  ActKind kind = ActKind::kTanh;
  float alpha = 0.0f;
  float beta = 0.0f;

  template <class Acc>
  Acc operator()(Acc x) const {
    const Acc a = static_cast<Acc>(alpha);
    const Acc b = static_cast<Acc>(beta);
    switch (kind) {
      case ActKind::kRelu: return x < 0 ? Acc{0} : x;  // NaN stays NaN, as the Relu kernel
      case ActKind::kTanh: return std::tanh(x);
      case ActKind::kSigmoid: return Acc{1} / (Acc{1} + std::exp(-x));
      case ActKind::kAffine: return a * x + b;
      case ActKind::kLeakyRelu: return x >= 0 ? x : a * x;
      case ActKind::kThresholdedRelu: return x > a ? x : Acc{0};
      case ActKind::kScaledTanh: return a * std::tanh(b * x);
      case ActKind::kHardSigmoid: return std::clamp(a * x + b, Acc{0}, Acc{1});
      case ActKind::kElu: return x >= 0 ? x : a * (std::exp(x) - Acc{1});
      case ActKind::kSoftsign: return x / (Acc{1} + std::abs(x));
      case ActKind::kSoftplus: return std::log1p(std::exp(-std::abs(x))) + std::max(x, Acc{0});
    }
    return x;
  }
};

// One LSTM step of one batch row with the default activations (f = sigmoid, g = h = tanh) and no P input:
// the gates' pre-activations [i, o, f, c] are summed (and clipped when clip > 0) into `gates` (4 H floats),
// i, o and f go through one vector sigmoid and c through one vector tanh, then c = f c + i c~, h = o tanh(c).
// The absent P is P = 0 ("If not specified - assumed to be 0"): its terms 0 * C add nothing to finite states,
// but an infinite or NaN cell state makes them NaN, as in the general path.
void lstm_row_f32(const float* pre, const float* rec, int64_t H, float clip, float* gates, float* c_state,
                  float* h_state) {
  for (int64_t g = 0; g < 4 * H; ++g) {
    const bool peephole_gate = g < H || (g >= 2 * H && g < 3 * H);  // i and f read C_{t-1}
    const float v = pre[g] + rec[g] + (peephole_gate ? 0.0f * c_state[g % H] : 0.0f);
    gates[g] = clip > 0 ? std::clamp(v, -clip, clip) : v;
  }
  vector_sigmoid(gates, gates, 3 * H);
  float* const cell = gates + 3 * H;
  vector_tanh(cell, cell, H);
  for (int64_t e = 0; e < H; ++e) {
    c_state[e] = gates[2 * H + e] * c_state[e] + gates[e] * cell[e];
    cell[e] = c_state[e];
  }
  vector_tanh(cell, cell, H);
  // o reads C_t through its zero peephole: an infinite C_t makes it NaN.
  for (int64_t e = 0; e < H; ++e) {
    h_state[e] = std::isinf(c_state[e]) ? std::numeric_limits<float>::quiet_NaN() : gates[H + e] * cell[e];
  }
}

struct ActivationSpec {
  const char* name;
  ActKind kind;
  bool uses_alpha;
  bool uses_beta;
  float default_alpha;
  float default_beta;
};

constexpr ActivationSpec kActivationSpecs[] = {
    {"relu", ActKind::kRelu, false, false, 0, 0},
    {"tanh", ActKind::kTanh, false, false, 0, 0},
    {"sigmoid", ActKind::kSigmoid, false, false, 0, 0},
    {"affine", ActKind::kAffine, true, true, 1.0f, 0.0f},
    {"leakyrelu", ActKind::kLeakyRelu, true, false, 0.01f, 0},
    {"thresholdedrelu", ActKind::kThresholdedRelu, true, false, 1.0f, 0},
    {"scaledtanh", ActKind::kScaledTanh, true, true, 1.0f, 1.0f},
    {"hardsigmoid", ActKind::kHardSigmoid, true, true, 0.2f, 0.5f},
    {"elu", ActKind::kElu, true, false, 1.0f, 0},
    {"softsign", ActKind::kSoftsign, false, false, 0, 0},
    {"softplus", ActKind::kSoftplus, false, false, 0, 0},
};

struct RnnAttrs {
  Cell cell = Cell::kRnn;
  int64_t hidden = 0;
  int num_directions = 1;
  bool reverse_only = false;
  int64_t layout = 0;
  float clip = 0.0f;  // 0: no clipping
  bool linear_before_reset = false;
  bool input_forget = false;
  std::vector<Activation> activations;  // per direction: activations[d * per_direction + k]
  int per_direction = 1;
};

int gate_count(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4; }

struct RnnDims {
  int64_t seq = 0, batch = 0, input = 0;
};

constexpr int kX = 0, kW = 1, kR = 2, kB = 3, kSeqLens = 4, kInitH = 5, kInitC = 6, kP = 7;

const Tensor* input_at(KernelInputs inputs, int index) { return optional_input(inputs, static_cast<size_t>(index)); }

void gemm_acc(const GemmArgs& args, const float* a, const float* b, float* c, ThreadPool& pool) {
  gemm_f32(args, 1.0f, a, b, 0.0f, c, pool);
}
void gemm_acc(const GemmArgs& args, const double* a, const double* b, double* c, ThreadPool& pool) {
  gemm_f64(args, 1.0, a, b, 0.0, c, pool);
}

template <class T>
using AccOf = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class T>
std::vector<AccOf<T>> load_all(const Tensor* t) {
  std::vector<AccOf<T>> out;
  if (t == nullptr) return out;
  const T* src = t->data<T>();
  out.resize(static_cast<size_t>(t->numel()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<AccOf<T>>(static_cast<AccOf<T>>(src[i]));
  return out;
}

// f32 W and R given as constants, packed once at creation for the GEMM engine, per direction: op(W_d) = W_d^T
// (I x GH) for the input projection of all time steps, and op(R_d) = R_d^T (H x n) for the recurrent product of
// each step (a GRU without linear_before_reset keeps its z/r rows and its h rows apart, as run_typed multiplies
// them). Without them every step would pack R again.
struct PackedRnnWeights {
  std::vector<PackedB<float>> input;
  std::vector<PackedB<float>> recurrent;
  std::vector<PackedB<float>> recurrent_h;  // GRU without linear_before_reset only
};

// C = A * op(B): op(B) is `packed` when given (f32), else B^T read from `b`.
template <class Acc>
void gemm_weights(const GemmArgs& args, const Acc* a, const PackedB<float>* packed, const Acc* b, Acc* c,
                  ThreadPool& pool) {
  if constexpr (std::is_same_v<Acc, float>) {
    if (packed != nullptr) {
      gemm_f32_packed(args, 1.0f, a, *packed, 0.0f, c, pool);
      return;
    }
  }
  gemm_acc(args, a, b, c, pool);
}

class RnnKernel final : public Kernel {
 public:
  RnnKernel(std::string description, RnnAttrs attrs, std::optional<PackedRnnWeights> packed)
      : description_(std::move(description)), attrs_(std::move(attrs)), packed_(std::move(packed)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const RnnDims d, resolve(inputs));
    const DataType type = inputs[kX]->dtype();
    const int64_t nd = attrs_.num_directions;
    const int64_t h = attrs_.hidden;
    outputs.assign(3, OutputDesc{type, {}});
    if (attrs_.layout == 0) {
      outputs[0].shape = Shape{d.seq, nd, d.batch, h};
      outputs[1].shape = Shape{nd, d.batch, h};
    } else {
      outputs[0].shape = Shape{d.batch, d.seq, nd, h};
      outputs[1].shape = Shape{d.batch, nd, h};
    }
    outputs[2].shape = outputs[1].shape;
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const RnnDims d, resolve(inputs));
    // The input projections of all steps, [max(seq, 1), batch, gates * hidden] accumulators (at most 8 bytes):
    // the largest buffer the run sizes from the input shapes.
    const int64_t gh = gate_count(attrs_.cell) * attrs_.hidden;
    const std::optional<size_t> scratch_bytes =
        tensor_storage_bytes(DataType::kFloat64, Shape{std::max<int64_t>(d.seq, 1), d.batch, gh});
    if (!scratch_bytes) {
      return make_error(StatusCode::kInvalidArgument, description_, ": the gate buffer of ", d.seq, " steps x ",
                        d.batch, " batch x ", gh, " gate values overflows");
    }
    if (const RunLimits* limits = current_run_limits()) {
      TRY(limits->check_bytes(*scratch_bytes, description_ + ": gate buffer"));
    }
    visit_dtype<FloatTypes>(inputs[kX]->dtype(), [&]<class T>() { run_typed<T>(d, inputs, outputs, pool); });
    return Status::ok();
  }

 private:
  Status check_shape(KernelInputs inputs, int index, const char* name, std::initializer_list<int64_t> dims) const {
    const Tensor* t = input_at(inputs, index);
    if (t == nullptr) return Status::ok();
    if (t->shape() != Shape(dims)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input ", name, " has shape ",
                        shape_to_string(t->shape()), ", expected ", shape_to_string(Shape(dims)));
    }
    return Status::ok();
  }

  Expected<RnnDims> resolve(KernelInputs inputs) const {
    TRY(require_inputs(inputs, kR + 1, description_));
    const Tensor& x = *inputs[kX];
    if (!type_list_contains(FloatTypes{}, x.dtype()) || x.rank() != 3) {
      return make_error(StatusCode::kInvalidArgument, description_, ": X must be a 3-D float tensor");
    }
    for (int i : {kW, kR, kB, kInitH, kInitC, kP}) {
      const Tensor* t = input_at(inputs, i);
      if (t != nullptr && t->dtype() != x.dtype()) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input ", i, " type differs from X's");
      }
    }
    RnnDims d;
    d.seq = attrs_.layout == 0 ? x.shape()[0] : x.shape()[1];
    d.batch = attrs_.layout == 0 ? x.shape()[1] : x.shape()[0];
    d.input = x.shape()[2];
    const int64_t nd = attrs_.num_directions;
    const int64_t h = attrs_.hidden;
    const int64_t gh = gate_count(attrs_.cell) * h;
    TRY(check_shape(inputs, kW, "W", {nd, gh, d.input}));
    TRY(check_shape(inputs, kR, "R", {nd, gh, h}));
    TRY(check_shape(inputs, kB, "B", {nd, 2 * gh}));
    if (attrs_.layout == 0) {
      TRY(check_shape(inputs, kInitH, "initial_h", {nd, d.batch, h}));
    } else {
      TRY(check_shape(inputs, kInitH, "initial_h", {d.batch, nd, h}));
    }
    if (attrs_.cell == Cell::kLstm) {
      if (attrs_.layout == 0) {
        TRY(check_shape(inputs, kInitC, "initial_c", {nd, d.batch, h}));
      } else {
        TRY(check_shape(inputs, kInitC, "initial_c", {d.batch, nd, h}));
      }
      TRY(check_shape(inputs, kP, "P", {nd, 3 * h}));
    }
    if (const Tensor* lens = input_at(inputs, kSeqLens)) {
      if (lens->dtype() != DataType::kInt32 || lens->numel() != d.batch) {
        return make_error(StatusCode::kInvalidArgument, description_,
                          ": sequence_lens must be int32 of shape [batch_size]");
      }
      const int32_t* v = lens->data<int32_t>();
      for (int64_t b = 0; b < d.batch; ++b) {
        if (v[b] < 0 || v[b] > d.seq) {
          return make_error(StatusCode::kInvalidArgument, description_, ": sequence_lens[", b, "] = ", v[b],
                            " is outside [0, ", d.seq, "]");
        }
      }
    }
    return d;
  }

  // Index of (direction, batch) in initial_h / Y_h style tensors.
  int64_t state_index(int64_t dir, int64_t b, int64_t batch) const {
    return attrs_.layout == 0 ? dir * batch + b : b * attrs_.num_directions + dir;
  }

  template <class T>
  void run_typed(const RnnDims& d, KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const {
    using Acc = AccOf<T>;
    const int64_t H = attrs_.hidden;
    const int G = gate_count(attrs_.cell);
    const int64_t GH = G * H;
    const int64_t nd = attrs_.num_directions;
    const int64_t S = d.seq;
    const int64_t B = d.batch;
    const int64_t I = d.input;
    const Cell cell = attrs_.cell;
    const bool gru_split_h = cell == Cell::kGru && !attrs_.linear_before_reset;
    const bool gru_lbr = cell == Cell::kGru && attrs_.linear_before_reset;
    // A long sequence stops between time steps once the run must (the executor discards the partial outputs).
    const RunLimits* limits = current_run_limits();

    // X as [seq, batch, input].
    std::vector<Acc> x(static_cast<size_t>(S * B * I));
    const T* x_src = inputs[kX]->data<T>();
    for (int64_t t = 0; t < S; ++t) {
      for (int64_t b = 0; b < B; ++b) {
        const T* row = x_src + (attrs_.layout == 0 ? (t * B + b) : (b * S + t)) * I;
        for (int64_t e = 0; e < I; ++e) x[(t * B + b) * I + e] = static_cast<Acc>(row[e]);
      }
    }
    const PackedRnnWeights* packed = std::is_same_v<T, float> && packed_ ? &*packed_ : nullptr;
    const std::vector<Acc> w = packed != nullptr ? std::vector<Acc>{} : load_all<T>(inputs[kW]);
    const std::vector<Acc> r = packed != nullptr ? std::vector<Acc>{} : load_all<T>(inputs[kR]);
    const std::vector<Acc> bias = load_all<T>(input_at(inputs, kB));
    const std::vector<Acc> init_h = load_all<T>(input_at(inputs, kInitH));
    const std::vector<Acc> init_c = load_all<T>(input_at(inputs, kInitC));
    const std::vector<Acc> peep = load_all<T>(input_at(inputs, kP));
    const Tensor* lens_tensor = input_at(inputs, kSeqLens);
    const int32_t* lens = lens_tensor != nullptr ? lens_tensor->data<int32_t>() : nullptr;

    T* y = outputs[0].data<T>();
    T* y_h = outputs.size() > 1 ? outputs[1].data<T>() : nullptr;
    T* y_c = outputs.size() > 2 && cell == Cell::kLstm ? outputs[2].data<T>() : nullptr;
    if (outputs.size() > 2 && cell != Cell::kLstm) {
      std::fill(outputs[2].data<T>(), outputs[2].data<T>() + outputs[2].numel(), T(0.0f));
    }
    std::fill(y, y + outputs[0].numel(), T(0.0f));

    std::vector<Acc> xw(static_cast<size_t>(S * B * GH));
    std::vector<Acc> hr(static_cast<size_t>(B * GH));
    std::vector<Acc> gated(static_cast<size_t>(B * H));
    std::vector<Acc> h_state(static_cast<size_t>(B * H));
    std::vector<Acc> c_state(static_cast<size_t>(B * H));
    const Acc clip = static_cast<Acc>(attrs_.clip);
    const auto clipped = [&](Acc v) { return clip > 0 ? std::clamp(v, -clip, clip) : v; };
    std::vector<Acc> lstm_gates(cell == Cell::kLstm ? static_cast<size_t>(GH) : 0);

    for (int64_t dir = 0; dir < nd; ++dir) {
      const bool reverse = attrs_.reverse_only || dir == 1;
      const Acc* w_d = packed != nullptr ? nullptr : w.data() + dir * GH * I;
      const Acc* r_d = packed != nullptr ? nullptr : r.data() + dir * GH * H;
      const PackedB<float>* packed_w = packed != nullptr ? &packed->input[dir] : nullptr;
      const PackedB<float>* packed_r = packed != nullptr ? &packed->recurrent[dir] : nullptr;
      const PackedB<float>* packed_r_h = packed != nullptr && gru_split_h ? &packed->recurrent_h[dir] : nullptr;
      const Acc* wb = bias.empty() ? nullptr : bias.data() + dir * 2 * GH;
      const Acc* rb = bias.empty() ? nullptr : wb + GH;
      const Acc* p_d = peep.empty() ? nullptr : peep.data() + dir * 3 * H;
      const Activation* act = attrs_.activations.data() + dir * attrs_.per_direction;
      const bool vector_lstm = std::is_same_v<Acc, float> && cell == Cell::kLstm && p_d == nullptr &&
                               !attrs_.input_forget && act[0].kind == ActKind::kSigmoid &&
                               act[1].kind == ActKind::kTanh && act[2].kind == ActKind::kTanh;

      if (S * B > 0 && I > 0) {
        gemm_weights(GemmArgs{false, true, S * B, GH, I, I, I, GH}, x.data(), packed_w, w_d, xw.data(), pool);
      } else {
        std::fill(xw.begin(), xw.end(), Acc{0});
      }
      if (wb != nullptr) {
        for (int64_t row = 0; row < S * B; ++row) {
          Acc* out = xw.data() + row * GH;
          for (int64_t g = 0; g < GH; ++g) {
            const bool fold_rb = !(gru_lbr && g >= 2 * H);
            out[g] += wb[g] + (fold_rb ? rb[g] : Acc{0});
          }
        }
      }
      for (int64_t b = 0; b < B; ++b) {
        for (int64_t e = 0; e < H; ++e) {
          const size_t at = static_cast<size_t>(state_index(dir, b, B) * H + e);
          h_state[b * H + e] = init_h.empty() ? Acc{0} : init_h[at];
          c_state[b * H + e] = init_c.empty() ? Acc{0} : init_c[at];
        }
      }

      for (int64_t step = 0; step < S; ++step) {
        if (run_should_stop(limits)) return;
        const int64_t t = reverse ? S - 1 - step : step;
        const int64_t n_recurrent = gru_split_h ? 2 * H : GH;
        if (B > 0 && H > 0) {
          gemm_weights(GemmArgs{false, true, B, n_recurrent, H, H, H, GH}, h_state.data(), packed_r, r_d, hr.data(),
                       pool);
        }
        const auto active = [&](int64_t b) { return lens == nullptr || t < lens[b]; };
        if (gru_split_h) {
          // h gate: (r (.) H_{t-1}) * R_h^T, which needs r first.
          for (int64_t b = 0; b < B; ++b) {
            const Acc* pre = xw.data() + (t * B + b) * GH;
            for (int64_t e = 0; e < H; ++e) {
              const Acc reset = act[0](clipped(pre[H + e] + hr[b * GH + H + e]));
              gated[b * H + e] = reset * h_state[b * H + e];
            }
          }
          if (B > 0 && H > 0) {
            gemm_weights(GemmArgs{false, true, B, H, H, H, H, GH}, gated.data(), packed_r_h,
                         r_d != nullptr ? r_d + 2 * H * H : nullptr, hr.data() + 2 * H, pool);
          }
        }
        for (int64_t b = 0; b < B; ++b) {
          if (!active(b)) continue;
          const Acc* pre = xw.data() + (t * B + b) * GH;
          const Acc* rec = hr.data() + b * GH;
          Acc* hs = h_state.data() + b * H;
          Acc* cs = c_state.data() + b * H;
          if constexpr (std::is_same_v<Acc, float>) {
            if (vector_lstm) lstm_row_f32(pre, rec, H, clip, lstm_gates.data(), cs, hs);
          }
          for (int64_t e = 0; e < H && !vector_lstm; ++e) {
            if (cell == Cell::kRnn) {
              hs[e] = act[0](clipped(pre[e] + rec[e]));
            } else if (cell == Cell::kGru) {
              const Acc z = act[0](clipped(pre[e] + rec[e]));
              Acc candidate_in = 0;
              if (gru_lbr) {
                const Acc reset = act[0](clipped(pre[H + e] + rec[H + e]));
                const Acc rbh = rb != nullptr ? rb[2 * H + e] : Acc{0};
                candidate_in = pre[2 * H + e] + reset * (rec[2 * H + e] + rbh);
              } else {
                candidate_in = pre[2 * H + e] + rec[2 * H + e];
              }
              const Acc candidate = act[1](clipped(candidate_in));
              hs[e] = (Acc{1} - z) * candidate + z * hs[e];
            } else {
              const Acc c_prev = cs[e];
              const Acc pi = p_d != nullptr ? p_d[e] : Acc{0};
              const Acc po = p_d != nullptr ? p_d[H + e] : Acc{0};
              const Acc pf = p_d != nullptr ? p_d[2 * H + e] : Acc{0};
              const Acc in_gate = act[0](clipped(pre[e] + rec[e] + pi * c_prev));
              const Acc forget = attrs_.input_forget ? Acc{1} - in_gate
                                                     : act[0](clipped(pre[2 * H + e] + rec[2 * H + e] + pf * c_prev));
              const Acc cand = act[1](clipped(pre[3 * H + e] + rec[3 * H + e]));
              const Acc c_new = forget * c_prev + in_gate * cand;
              const Acc out_gate = act[0](clipped(pre[H + e] + rec[H + e] + po * c_new));
              cs[e] = c_new;
              hs[e] = out_gate * act[2](c_new);
            }
          }
          T* y_row = y + (attrs_.layout == 0 ? ((t * nd + dir) * B + b) : ((b * S + t) * nd + dir)) * H;
          for (int64_t e = 0; e < H; ++e) y_row[e] = T(hs[e]);
        }
      }
      for (int64_t b = 0; b < B; ++b) {
        const int64_t at = state_index(dir, b, B) * H;
        for (int64_t e = 0; e < H; ++e) {
          if (y_h != nullptr) y_h[at + e] = T(h_state[b * H + e]);
          if (y_c != nullptr) y_c[at + e] = T(c_state[b * H + e]);
        }
      }
    }
  }

  std::string description_;
  RnnAttrs attrs_;
  std::optional<PackedRnnWeights> packed_;  // f32 constant W and R
};

std::string lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Packs constant f32 W [dirs, GH, I] and R [dirs, GH, H]; nullopt when either is not such a constant (the run then
// checks and reads the inputs as given).
std::optional<PackedRnnWeights> pack_weights(const RnnAttrs& attrs, const Tensor* w, const Tensor* r) {
  const int64_t nd = attrs.num_directions;
  const int64_t H = attrs.hidden;
  const int64_t GH = gate_count(attrs.cell) * H;
  if (w == nullptr || r == nullptr || w->dtype() != DataType::kFloat32 || r->dtype() != DataType::kFloat32 ||
      w->rank() != 3 || w->shape()[0] != nd || w->shape()[1] != GH || r->shape() != Shape{nd, GH, H}) {
    return std::nullopt;
  }
  const int64_t I = w->shape()[2];
  if (I <= 0) return std::nullopt;  // no input projection to pack (the run fills it with zeros)
  const bool gru_split_h = attrs.cell == Cell::kGru && !attrs.linear_before_reset;
  const int64_t n_recurrent = gru_split_h ? 2 * H : GH;
  PackedRnnWeights packed;
  for (int64_t dir = 0; dir < nd; ++dir) {
    const float* w_d = w->data<float>() + dir * GH * I;
    const float* r_d = r->data<float>() + dir * GH * H;
    packed.input.push_back(PackedB<float>::pack(GemmArgs{false, true, 0, GH, I, I, I, GH}, w_d));
    packed.recurrent.push_back(PackedB<float>::pack(GemmArgs{false, true, 0, n_recurrent, H, H, H, GH}, r_d));
    if (gru_split_h) {
      packed.recurrent_h.push_back(PackedB<float>::pack(GemmArgs{false, true, 0, H, H, H, H, GH}, r_d + 2 * H * H));
    }
  }
  return packed;
}

template <Cell C>
Expected<std::unique_ptr<Kernel>> create_rnn(const KernelInfo& info) {
  const graph::Node& node = info.node;
  RnnAttrs a;
  a.cell = C;
  TRY_ASSIGN(a.hidden, node.attr_int("hidden_size", 0));
  if (a.hidden <= 0) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": hidden_size must be positive, got ", a.hidden);
  }
  // Bias rows hold 2 * gates * hidden_size values (at most 8 * hidden_size), a count that must not overflow.
  if (a.hidden > std::numeric_limits<int64_t>::max() / 8) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": hidden_size ", a.hidden, " is too large");
  }
  TRY_ASSIGN(const std::string direction, node.attr_string("direction", "forward"));
  if (direction == "bidirectional") {
    a.num_directions = 2;
  } else if (direction == "reverse") {
    a.reverse_only = true;
  } else if (direction != "forward") {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": unknown direction '", direction, "'");
  }
  TRY_ASSIGN(a.layout, node.attr_int("layout", 0));
  if (a.layout != 0 && a.layout != 1) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": layout must be 0 or 1, got ", a.layout);
  }
  TRY_ASSIGN(a.clip, node.attr_float("clip", 0.0f));
  if (a.clip < 0) return make_error(StatusCode::kInvalidGraph, node.describe(), ": clip must be positive");
  TRY_ASSIGN(const int64_t lbr, node.attr_int("linear_before_reset", 0));
  a.linear_before_reset = lbr != 0;
  TRY_ASSIGN(const int64_t input_forget, node.attr_int("input_forget", 0));
  a.input_forget = input_forget != 0;

  std::vector<std::string> names;
  if (const graph::Attribute* attr = node.find_attribute("activations")) names = attr->strings;
  const std::vector<std::string> defaults = C == Cell::kRnn   ? std::vector<std::string>{"Tanh"}
                                            : C == Cell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                              : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  a.per_direction = static_cast<int>(defaults.size());
  if (names.empty()) {
    for (int dir = 0; dir < a.num_directions; ++dir) names.insert(names.end(), defaults.begin(), defaults.end());
  } else if (names.size() == defaults.size() && a.num_directions == 2) {
    std::vector<std::string> twice = names;
    names.insert(names.end(), twice.begin(), twice.end());
  }
  if (names.size() != static_cast<size_t>(a.per_direction * a.num_directions)) {
    return make_error(StatusCode::kInvalidGraph, node.describe(), ": expected ", a.per_direction * a.num_directions,
                      " activations, got ", names.size());
  }
  TRY_ASSIGN(const std::vector<float> alphas, node.attr_floats("activation_alpha", {}));
  TRY_ASSIGN(const std::vector<float> betas, node.attr_floats("activation_beta", {}));
  size_t next_alpha = 0;
  size_t next_beta = 0;
  for (const std::string& name : names) {
    const std::string key = lowercase(name);
    const ActivationSpec* spec = nullptr;
    for (const ActivationSpec& s : kActivationSpecs) {
      if (key == s.name) spec = &s;
    }
    if (spec == nullptr) {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": unsupported activation '", name, "'");
    }
    Activation act{spec->kind, spec->default_alpha, spec->default_beta};
    if (spec->uses_alpha && next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
    if (spec->uses_beta && next_beta < betas.size()) act.beta = betas[next_beta++];
    a.activations.push_back(act);
  }
  const auto constant = [&](size_t index) {
    return index < info.constant_inputs.size() ? info.constant_inputs[index] : nullptr;
  };
  std::optional<PackedRnnWeights> packed = pack_weights(a, constant(kW), constant(kR));
  return std::unique_ptr<Kernel>(std::make_unique<RnnKernel>(node.describe(), std::move(a), std::move(packed)));
}

constexpr DataTypeMask kOld = type_mask(TypeList<float, double, Float16>{});
constexpr DataTypeMask kNew = type_mask(FloatTypes{});

const KernelDef kRnnKernels[] = {
    {"RNN", graph::kOnnxDomain, 1, 21, kOld, 0, create_rnn<Cell::kRnn>},
    {"RNN", graph::kOnnxDomain, 22, kLatestOpset, kNew, 0, create_rnn<Cell::kRnn>},
    {"GRU", graph::kOnnxDomain, 1, 21, kOld, 0, create_rnn<Cell::kGru>},
    {"GRU", graph::kOnnxDomain, 22, kLatestOpset, kNew, 0, create_rnn<Cell::kGru>},
    {"LSTM", graph::kOnnxDomain, 1, 21, kOld, 0, create_rnn<Cell::kLstm>},
    {"LSTM", graph::kOnnxDomain, 22, kLatestOpset, kNew, 0, create_rnn<Cell::kLstm>},
};

}  // namespace

std::span<const KernelDef> rnn_kernels() { return kRnnKernels; }

}  // namespace nxrt::cpu
