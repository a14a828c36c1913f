// Einsum: the equation is parsed once at create; per run each operand becomes a strided view (a label repeated
// in one operand is its diagonal: the strides add up), then operands are contracted left to right. One
// contraction packs both sides into [batch, M, K] x [batch, K, N] (broadcast size-1 dims get stride 0) and runs
// a batched GEMM; labels nobody needs later are summed by contracting with a scalar 1. The result is permuted
// into the output order while converting back to the element type.
// Arithmetic: float16/bfloat16 in float, integers in uint32/uint64 (wrapping as two's complement).
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "ep/cpu/microkernels/gemm.h"
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

namespace {

constexpr int kLetterCount = 52;  // 'A'..'Z' -> 0..25, 'a'..'z' -> 26..51 (ASCII order)
constexpr int kEllipsis = -1;
constexpr int64_t kEinsumGrain = 16384;
constexpr int64_t kMaxScratchBytes = int64_t{1} << 34;

struct Term {
  std::vector<int> tokens;  // letter ids and at most one kEllipsis
  bool has_ellipsis = false;
};

struct Equation {
  std::vector<Term> inputs;
  Term output;
  bool explicit_output = false;
};

Expected<Term> parse_term(const std::string& text, const std::string& description) {
  Term term;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.') {
      if (text.compare(i, 3, "...") != 0 || term.has_ellipsis) {
        return make_error(StatusCode::kInvalidGraph, description, ": equation term '", text,
                          "' has a malformed or repeated ellipsis");
      }
      term.has_ellipsis = true;
      term.tokens.push_back(kEllipsis);
      i += 2;
    } else if (c >= 'A' && c <= 'Z') {
      term.tokens.push_back(c - 'A');
    } else if (c >= 'a' && c <= 'z') {
      term.tokens.push_back(26 + (c - 'a'));
    } else {
      return make_error(StatusCode::kInvalidGraph, description, ": equation term '", text,
                        "' has invalid character '", c, "'");
    }
  }
  return term;
}

Expected<Equation> parse_equation(const std::string& raw, const std::string& description) {
  std::string text;
  for (const char c : raw) {
    if (c != ' ' && c != '\t' && c != '\n') text += c;
  }
  Equation eq;
  const size_t arrow = text.find("->");
  const std::string lhs = text.substr(0, arrow);
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    TRY_ASSIGN(Term term, parse_term(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start),
                                     description));
    eq.inputs.push_back(std::move(term));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  int counts[kLetterCount] = {};
  for (const Term& term : eq.inputs) {
    for (const int t : term.tokens) {
      if (t >= 0) ++counts[t];
    }
  }
  if (arrow == std::string::npos) {
    bool any_ellipsis = false;
    for (const Term& term : eq.inputs) any_ellipsis = any_ellipsis || term.has_ellipsis;
    if (any_ellipsis) {
      eq.output.tokens.push_back(kEllipsis);
      eq.output.has_ellipsis = true;
    }
    for (int letter = 0; letter < kLetterCount; ++letter) {
      if (counts[letter] == 1) eq.output.tokens.push_back(letter);
    }
    return eq;
  }
  eq.explicit_output = true;
  TRY_ASSIGN(eq.output, parse_term(text.substr(arrow + 2), description));
  bool seen[kLetterCount] = {};
  for (const int t : eq.output.tokens) {
    if (t < 0) continue;
    if (seen[t] || counts[t] == 0) {
      return make_error(StatusCode::kInvalidGraph, description, ": equation '", raw, "' output label '",
                        static_cast<char>(t < 26 ? 'A' + t : 'a' + t - 26),
                        seen[t] ? "' is repeated" : "' does not appear in any input");
    }
    seen[t] = true;
  }
  return eq;
}

// Labels resolved against concrete shapes: ellipsis dims get ids kLetterCount + j (right-aligned).
struct Resolved {
  std::vector<std::vector<int>> input_labels;  // per input, per axis
  std::vector<int64_t> size;                   // per label id; -1 when unused
  std::vector<int> output_labels;
};

Expected<Resolved> resolve(const Equation& eq, KernelInputs inputs, const std::string& description) {
  if (inputs.size() != eq.inputs.size()) {
    return make_error(StatusCode::kInvalidArgument, description, ": equation has ", eq.inputs.size(),
                      " input terms but the node has ", inputs.size(), " inputs");
  }
  int64_t ellipsis_rank = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] == nullptr) return make_error(StatusCode::kInvalidArgument, description, ": missing input ", i);
    const int64_t letters = static_cast<int64_t>(eq.inputs[i].tokens.size()) - (eq.inputs[i].has_ellipsis ? 1 : 0);
    const int64_t rank = static_cast<int64_t>(inputs[i]->rank());
    if (eq.inputs[i].has_ellipsis ? rank < letters : rank != letters) {
      return make_error(StatusCode::kInvalidArgument, description, ": input ", i, " shape ",
                        shape_to_string(inputs[i]->shape()), " does not match its equation term of ", letters,
                        " labels", eq.inputs[i].has_ellipsis ? " and an ellipsis" : "");
    }
    if (eq.inputs[i].has_ellipsis) ellipsis_rank = std::max(ellipsis_rank, rank - letters);
  }
  Resolved r;
  r.size.assign(static_cast<size_t>(kLetterCount + ellipsis_rank), -1);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Shape& shape = inputs[i]->shape();
    const int64_t letters = static_cast<int64_t>(eq.inputs[i].tokens.size()) - (eq.inputs[i].has_ellipsis ? 1 : 0);
    const int64_t own_ellipsis = static_cast<int64_t>(shape.size()) - letters;
    std::vector<int> labels;
    for (const int t : eq.inputs[i].tokens) {
      if (t != kEllipsis) {
        labels.push_back(t);
        continue;
      }
      for (int64_t j = ellipsis_rank - own_ellipsis; j < ellipsis_rank; ++j) labels.push_back(kLetterCount + static_cast<int>(j));
    }
    for (size_t axis = 0; axis < labels.size(); ++axis) {
      const int label = labels[axis];
      const int64_t dim = shape[axis];
      int64_t& size = r.size[static_cast<size_t>(label)];
      bool same_input_mismatch = false;
      for (size_t prev = 0; prev < axis; ++prev) {
        same_input_mismatch = same_input_mismatch || (labels[prev] == label && shape[prev] != dim);
      }
      if (same_input_mismatch || (size >= 0 && size != dim && size != 1 && dim != 1)) {
        return make_error(StatusCode::kInvalidArgument, description, ": input ", i, " shape ", shape_to_string(shape),
                          " dimension ", axis, " (", dim, ") conflicts with size ", size,
                          " of the same label elsewhere");
      }
      if (size < 0 || size == 1) size = dim;
    }
    r.input_labels.push_back(std::move(labels));
  }
  for (const int t : eq.output.tokens) {
    if (t != kEllipsis) {
      r.output_labels.push_back(t);
      continue;
    }
    for (int64_t j = 0; j < ellipsis_rank; ++j) r.output_labels.push_back(kLetterCount + static_cast<int>(j));
  }
  return r;
}

template <class T>
using AccOf = std::conditional_t<
    std::is_floating_point_v<T>, T,
    std::conditional_t<std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>, float,
                       std::conditional_t<(sizeof(T) <= 4), uint32_t, uint64_t>>>;

template <class A>
struct View {
  const A* data = nullptr;
  std::vector<int> labels;
  Shape dims;
  std::vector<int64_t> strides;
};

int find_label(const std::vector<int>& labels, int label) {
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] == label) return static_cast<int>(i);
  }
  return -1;
}

// dst[row-major position] = convert(src[sum(index * stride)]) over `dims`, parallel over rows of the last dim.
template <class S, class D, class Convert>
void strided_copy(const S* src, const Shape& dims, const std::vector<int64_t>& strides, D* dst, ThreadPool& pool,
                  Convert convert) {
  const int64_t numel = shape_numel(dims);
  if (numel == 0) return;
  if (dims.empty()) {
    dst[0] = convert(src[0]);
    return;
  }
  const size_t rank = dims.size();
  const int64_t inner = std::max<int64_t>(dims.back(), 1);
  const int64_t inner_stride = strides.back();
  pool.parallel_for(numel / inner, std::max<int64_t>(1, kEinsumGrain / inner), [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      int64_t rest = row;
      int64_t offset = 0;
      for (size_t d = rank - 1; d-- > 0;) {
        offset += (rest % dims[d]) * strides[d];
        rest /= dims[d];
      }
      D* out = dst + row * inner;
      const S* in = src + offset;
      for (int64_t i = 0; i < inner; ++i) out[i] = convert(in[i * inner_stride]);
    }
  });
}

template <class A>
const A* packed(const A* src, const Shape& dims, const std::vector<int64_t>& strides, std::vector<A>& storage,
                ThreadPool& pool) {
  int64_t expected = 1;
  bool contiguous = true;
  for (size_t d = dims.size(); d-- > 0;) {
    if (dims[d] != 1 && strides[d] != expected) contiguous = false;
    expected *= dims[d];
  }
  if (contiguous) return src;
  storage.resize(static_cast<size_t>(shape_numel(dims)));
  strided_copy(src, dims, strides, storage.data(), pool, [](A v) { return v; });
  return storage.data();
}

// c[batch] = a[batch] (m x k) * b[batch] (k x n), all contiguous; c is fully written.
template <class A>
void batched_gemm(const A* a, const A* b, A* c, int64_t batch, int64_t m, int64_t n, int64_t k, ThreadPool& pool) {
  if (m * n == 0) return;
  if constexpr (std::is_same_v<A, float> || std::is_same_v<A, double>) {
    const GemmArgs args{false, false, m, n, k, k, n, n};
    auto one = [&](int64_t i) {
      if constexpr (std::is_same_v<A, float>) {
        gemm_f32(args, 1.0f, a + i * m * k, b + i * k * n, 0.0f, c + i * m * n, pool);
      } else {
        gemm_f64(args, 1.0, a + i * m * k, b + i * k * n, 0.0, c + i * m * n, pool);
      }
    };
    if (batch == 1) {
      one(0);
      return;
    }
    pool.parallel_for(batch, std::max<int64_t>(1, kEinsumGrain / std::max<int64_t>(1, m * n * std::max<int64_t>(k, 1))),
                      [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) one(i);
    });
  } else {
    pool.parallel_for(batch * m, std::max<int64_t>(1, kEinsumGrain / std::max<int64_t>(1, n * std::max<int64_t>(k, 1))),
                      [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t bi = row / m;
        const A* a_row = a + row * k;
        const A* b_mat = b + bi * k * n;
        A* c_row = c + row * n;
        std::fill(c_row, c_row + n, A{0});
        for (int64_t p = 0; p < k; ++p) {
          const A x = a_row[p];
          const A* b_row = b_mat + p * n;
          for (int64_t j = 0; j < n; ++j) c_row[j] += x * b_row[j];
        }
      }
    });
  }
}

// Contracts two views. Labels in `keep` survive (batch when in both, else M or N); the others are summed (K).
template <class A>
Expected<View<A>> contract(const View<A>& a, const View<A>& b, const std::vector<bool>& keep,
                           std::vector<std::vector<A>>& storage, ThreadPool& pool, const std::string& description) {
  std::vector<int> batch, rows, sums, cols;
  for (const int l : a.labels) {
    if (!keep[static_cast<size_t>(l)]) {
      sums.push_back(l);
    } else {
      (find_label(b.labels, l) >= 0 ? batch : rows).push_back(l);
    }
  }
  for (const int l : b.labels) {
    if (find_label(a.labels, l) >= 0) continue;
    (keep[static_cast<size_t>(l)] ? cols : sums).push_back(l);
  }
  auto local = [](const View<A>& v, int l, int64_t& stride) {
    const int at = find_label(v.labels, l);
    stride = at < 0 ? 0 : v.strides[static_cast<size_t>(at)];
    return at < 0 ? int64_t{1} : v.dims[static_cast<size_t>(at)];
  };
  Shape a_dims, b_dims;
  std::vector<int64_t> a_strides, b_strides;
  int64_t nb = 1, nm = 1, nk = 1, nn = 1;
  auto add_shared = [&](int l, int64_t& count, bool to_a, bool to_b) {
    int64_t sa = 0, sb = 0;
    const int64_t da = local(a, l, sa);
    const int64_t db = local(b, l, sb);
    const int64_t size = da == 1 ? db : da;
    count *= size;
    if (to_a) {
      a_dims.push_back(size);
      a_strides.push_back(da == size ? sa : 0);
    }
    if (to_b) {
      b_dims.push_back(size);
      b_strides.push_back(db == size ? sb : 0);
    }
    return size;
  };
  View<A> result;
  for (const int l : batch) {
    result.labels.push_back(l);
    result.dims.push_back(add_shared(l, nb, true, true));
  }
  for (const int l : rows) {
    result.labels.push_back(l);
    result.dims.push_back(add_shared(l, nm, true, false));
  }
  for (const int l : sums) add_shared(l, nk, true, true);
  for (const int l : cols) {
    result.labels.push_back(l);
    result.dims.push_back(add_shared(l, nn, false, true));
  }
  for (const Shape* dims : {&a_dims, &b_dims, &result.dims}) {
    const std::optional<int64_t> count = checked_numel(*dims);
    if (!count || *count > kMaxScratchBytes / static_cast<int64_t>(sizeof(A))) {
      return make_error(StatusCode::kRuntimeException, description, ": an intermediate of shape ",
                        shape_to_string(*dims), " exceeds the scratch limit of ", kMaxScratchBytes, " bytes");
    }
  }
  storage.emplace_back();
  const A* pa = packed(a.data, a_dims, a_strides, storage.back(), pool);
  storage.emplace_back();
  const A* pb = packed(b.data, b_dims, b_strides, storage.back(), pool);
  storage.emplace_back(static_cast<size_t>(nb * nm * nn));
  A* pc = storage.back().data();
  batched_gemm(pa, pb, pc, nb, nm, nn, nk, pool);
  result.data = pc;
  result.strides = row_major_strides(result.dims);
  return result;
}

template <class A>
const View<A>& ones_view() {
  static const A one{1};
  static const View<A> view{&one, {}, {}, {}};
  return view;
}

// Sums the labels of `v` that neither `needed` nor `other` mentions, so a contraction never broadcasts them.
template <class A>
Expected<View<A>> sum_private(const View<A>& v, const View<A>& other, const std::vector<bool>& needed,
                              std::vector<std::vector<A>>& storage, ThreadPool& pool, const std::string& description) {
  std::vector<bool> keep(needed.size(), false);
  bool any_private = false;
  for (const int l : v.labels) {
    const bool private_label = !needed[static_cast<size_t>(l)] && find_label(other.labels, l) < 0;
    any_private = any_private || private_label;
    keep[static_cast<size_t>(l)] = !private_label;
  }
  if (!any_private) return v;
  return contract(v, ones_view<A>(), keep, storage, pool, description);
}

// Labels that must survive contracting views i and j: the output's and those of every other view.
template <class A>
std::vector<bool> needed_labels(const std::vector<View<A>>& views, const std::vector<bool>& keep, size_t i, size_t j) {
  std::vector<bool> needed = keep;
  for (size_t v = 0; v < views.size(); ++v) {
    if (v == i || v == j) continue;
    for (const int l : views[v].labels) needed[static_cast<size_t>(l)] = true;
  }
  return needed;
}

template <class T>
Status run_einsum(const Resolved& plan, KernelInputs inputs, Tensor& output, ThreadPool& pool,
                  const std::string& description) {
  using A = AccOf<T>;
  // Views point into these vectors' heap buffers, which stay put when the outer list grows.
  std::vector<std::vector<A>> storage;
  std::vector<View<A>> views;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = *inputs[i];
    View<A> view;
    if constexpr (sizeof(T) == sizeof(A) && std::is_integral_v<T> == std::is_integral_v<A>) {
      view.data = reinterpret_cast<const A*>(x.data<T>());  // same type, or the unsigned twin of an integer
    } else {
      storage.emplace_back(static_cast<size_t>(x.numel()));
      A* converted = storage.back().data();
      const T* src = x.data<T>();
      pool.parallel_for(x.numel(), kEinsumGrain, [&](int64_t begin, int64_t end) {
        for (int64_t e = begin; e < end; ++e) converted[e] = static_cast<A>(src[e]);
      });
      view.data = converted;
    }
    const std::vector<int64_t> strides = row_major_strides(x.shape());
    const std::vector<int>& labels = plan.input_labels[i];
    for (size_t axis = 0; axis < labels.size(); ++axis) {
      const int at = find_label(view.labels, labels[axis]);
      if (at >= 0) {
        view.strides[static_cast<size_t>(at)] += strides[axis];
        continue;
      }
      view.labels.push_back(labels[axis]);
      view.dims.push_back(x.shape()[axis]);
      view.strides.push_back(strides[axis]);
    }
    views.push_back(std::move(view));
  }
  std::vector<bool> keep(plan.size.size(), false);
  for (const int l : plan.output_labels) keep[static_cast<size_t>(l)] = true;
  // Greedy order: repeatedly contract the pair whose result is smallest.
  while (views.size() > 1) {
    size_t best_i = 0, best_j = 1;
    double best_size = -1.0;
    for (size_t i = 0; i < views.size(); ++i) {
      for (size_t j = i + 1; j < views.size(); ++j) {
        const std::vector<bool> needed = needed_labels(views, keep, i, j);
        double size = 1.0;
        for (const View<A>* v : {&views[i], &views[j]}) {
          for (size_t d = 0; d < v->labels.size(); ++d) {
            const int l = v->labels[d];
            if (needed[static_cast<size_t>(l)] && (v == &views[i] || find_label(views[i].labels, l) < 0)) {
              size *= static_cast<double>(plan.size[static_cast<size_t>(l)]);
            }
          }
        }
        if (best_size < 0 || size < best_size) {
          best_size = size;
          best_i = i;
          best_j = j;
        }
      }
    }
    const std::vector<bool> needed = needed_labels(views, keep, best_i, best_j);
    TRY_ASSIGN(const View<A> lhs, sum_private(views[best_i], views[best_j], needed, storage, pool, description));
    TRY_ASSIGN(const View<A> rhs, sum_private(views[best_j], lhs, needed, storage, pool, description));
    TRY_ASSIGN(View<A> merged, contract(lhs, rhs, needed, storage, pool, description));
    views.erase(views.begin() + static_cast<std::ptrdiff_t>(best_j));
    views[best_i] = std::move(merged);
  }
  View<A> current = std::move(views[0]);
  bool must_sum = false;
  for (const int l : current.labels) must_sum = must_sum || !keep[static_cast<size_t>(l)];
  if (must_sum) {
    TRY_ASSIGN(current, contract(current, ones_view<A>(), keep, storage, pool, description));
  }
  Shape out_dims;
  std::vector<int64_t> out_strides;
  for (const int l : plan.output_labels) {
    const int at = find_label(current.labels, l);
    const int64_t size = plan.size[static_cast<size_t>(l)];
    out_dims.push_back(size);
    out_strides.push_back(at < 0 || current.dims[static_cast<size_t>(at)] != size ? 0
                                                                                 : current.strides[static_cast<size_t>(at)]);
  }
  strided_copy(current.data, out_dims, out_strides, output.data<T>(), pool, [](A v) {
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
      return T(v);
    } else {
      return static_cast<T>(v);
    }
  });
  return Status::ok();
}

using EinsumTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                             uint32_t, uint64_t>;

class EinsumKernel final : public Kernel {
 public:
  EinsumKernel(std::string description, Equation equation)
      : description_(std::move(description)), equation_(std::move(equation)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const Resolved plan, resolve(equation_, inputs, description_));
    const DataType dtype = inputs[0]->dtype();
    if (!type_list_contains(EinsumTypes{}, dtype)) {
      return make_error(StatusCode::kNotImplemented, description_, ": input 0 type ", data_type_name(dtype),
                        " is not supported");
    }
    for (size_t i = 1; i < inputs.size(); ++i) {
      if (inputs[i]->dtype() != dtype) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input ", i, " type ",
                          data_type_name(inputs[i]->dtype()), " differs from input 0 type ", data_type_name(dtype));
      }
    }
    Shape out;
    for (const int l : plan.output_labels) out.push_back(plan.size[static_cast<size_t>(l)]);
    outputs.assign(1, OutputDesc{dtype, std::move(out)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    if (outputs[0].numel() == 0) return Status::ok();
    TRY_ASSIGN(const Resolved plan, resolve(equation_, inputs, description_));
    Status status;
    visit_dtype<EinsumTypes>(inputs[0]->dtype(),
                             [&]<class T>() { status = run_einsum<T>(plan, inputs, outputs[0], pool, description_); });
    return status;
  }

 private:
  std::string description_;
  Equation equation_;
};

Expected<std::unique_ptr<Kernel>> create_einsum(const KernelInfo& info) {
  TRY_ASSIGN(const std::string text, info.node.attr_string("equation", ""));
  if (text.empty()) {
    return make_error(StatusCode::kInvalidGraph, info.node.describe(), ": attribute equation is required");
  }
  TRY_ASSIGN(Equation equation, parse_equation(text, info.node.describe()));
  return std::unique_ptr<Kernel>(std::make_unique<EinsumKernel>(info.node.describe(), std::move(equation)));
}

const KernelDef kEinsumKernels[] = {
    {"Einsum", graph::kOnnxDomain, 12, kLatestOpset, type_mask(EinsumTypes{}), 0, create_einsum},
};

}  // namespace

std::span<const KernelDef> einsum_kernels() { return kEinsumKernels; }

}  // namespace nxrt::cpu
