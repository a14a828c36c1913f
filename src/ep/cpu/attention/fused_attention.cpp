// com.nxrt:FusedAttention (made by the optimizer's attention fusion), float32:
//   Y = MatMul(Softmax(MatMul(Q, Kt) * scale (or / scale when divide=1) [+ mask], axis=-1), V)
// Q [..., S, D], Kt [..., D, T], V [..., T, Dv] with equal batch dims; mask (optional) broadcasts to [..., S, T]
// without widening it; Y [..., S, Dv]. With heads_last=1 (rank 4, batch dims [B, H]) Q, V and Y keep the heads
// next to the features, as the projections make them: Q [B, S, H, D], V [B, T, H, Dv], Y [B, S, H, Dv] (Kt as
// above); the kernel reads and writes them with row strides of H * D and H * Dv instead of transposing.
// Each task takes one batch entry and a block of query rows (row_block), so its scores stay in cache; the steps
// are the unfused kernels' (same GEMM, scalar multiply, add), except that the softmax's division by the row sum
// is applied to the output rows (Dv values each, not T).
#include <algorithm>
#include <string>
#include <vector>

#include "core/scratch_space.h"
#include "ep/cpu/microkernels/gemm.h"
#include "ep/cpu/kernel.h"
#include "ep/cpu/microkernels/vector_math.h"

namespace nxrt::cpu {

namespace {

// Query rows per task: one block per batch entry on one thread (Kt and V are packed once); with more threads
// about 4 tasks per thread, a multiple of the thread count so that threads get equal shares; and a score block
// of at most kMaxScoreFloats (256 KiB) so it stays in L2.
constexpr int64_t kMinRowBlock = 16;
constexpr int64_t kMaxScoreFloats = 65536;

int64_t row_block(int64_t batch_count, int64_t s, int64_t t, int threads) {
  const int64_t batches = std::max<int64_t>(1, batch_count);
  int64_t blocks = threads == 1 ? 1 : std::max<int64_t>(1, (4 * threads + batches - 1) / batches);
  while (blocks < s && (batches * blocks) % threads != 0) ++blocks;
  int64_t rows = (s + blocks - 1) / blocks;
  rows = std::min(rows, kMaxScoreFloats / std::max<int64_t>(1, t));
  return std::clamp<int64_t>(rows, std::min(kMinRowBlock, s), std::max<int64_t>(1, s));
}

// The pool the per-task GEMMs get: tasks already fill every thread, so a GEMM plans for one thread (a GEMM given
// the busy run pool would run inline anyway, but cut for all threads, repacking its operands per cut).
ThreadPool& task_pool() {
  static ThreadPool pool(1);  // no workers: parallel_for runs on the caller
  return pool;
}

struct AttentionShape {
  Shape batch;  // leading dims shared by Q, Kt, V ([B, H] with heads_last)
  int64_t batch_count = 1;
  int64_t s = 0, d = 0, t = 0, dv = 0;
  int64_t heads = 1;  // with heads_last: H, the number of head blocks in a row of Q, V and Y; else 1
  DimList mask_strides;  // per dim of [batch..., S, T]; 0 where the mask broadcasts
};

class FusedAttentionKernel final : public Kernel {
 public:
  FusedAttentionKernel(std::string description, float scale, bool divide, bool heads_last)
      : description_(std::move(description)), scale_(scale), divide_(divide), heads_last_(heads_last) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const AttentionShape shape, resolve(inputs));
    Shape out = heads_last_ ? Shape{shape.batch[0], shape.s, shape.heads} : shape.batch;
    if (!heads_last_) out.push_back(shape.s);
    out.push_back(shape.dv);
    outputs.assign(1, OutputDesc{DataType::kFloat32, std::move(out)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const AttentionShape shape, resolve(inputs));
    if (outputs[0].numel() == 0) return Status::ok();
    const float* q = inputs[0]->data<float>();
    const float* kt = inputs[1]->data<float>();
    const float* v = inputs[2]->data<float>();
    const Tensor* mask_tensor = optional_input(inputs, 3);
    const float* mask = mask_tensor != nullptr ? mask_tensor->data<float>() : nullptr;
    float* y = outputs[0].data<float>();
    const int64_t block = row_block(shape.batch_count, shape.s, shape.t, pool.num_threads());
    const int64_t row_blocks = (shape.s + block - 1) / block;
    pool.parallel_for(shape.batch_count * row_blocks, 1, [&](int64_t begin, int64_t end) {
      // Every score is written by the GEMM (or filled) before it is read.
      float* const scores = scratch_floats(ScratchUse::kAttentionScores, block * (shape.t + 1));
      float* const sums = scores + block * shape.t;
      for (int64_t task = begin; task < end; ++task) {
        const int64_t b = task / row_blocks;
        const int64_t row0 = (task % row_blocks) * block;
        const int64_t rows = std::min(block, shape.s - row0);
        attend_block(shape, b, row0, rows, q, kt, v, mask, y, scores, sums, task_pool());
      }
    });
    return Status::ok();
  }

 private:
  void attend_block(const AttentionShape& sh, int64_t b, int64_t row0, int64_t rows, const float* q,
                    const float* kt, const float* v, const float* mask, float* y, float* scores, float* sums,
                    ThreadPool& pool) const {
    // Row r of Q, V or Y for batch entry b = (b / H) * H + h with heads_last: element (b / H, r, h, 0) of the
    // [B, rows, H, D] tensor; otherwise H = 1 and this is element (b, r, 0).
    const int64_t h = sh.heads;
    const auto row_of = [&](int64_t rows_per_entry, int64_t r, int64_t width) {
      return ((b / h * rows_per_entry + r) * h + b % h) * width;
    };
    if (sh.t == 0) {
      for (int64_t i = 0; i < rows; ++i) std::fill_n(y + row_of(sh.s, row0 + i, sh.dv), sh.dv, 0.0f);
      return;
    }
    if (sh.d > 0) {
      // A multiplying scale rides on the GEMM's alpha (applied once to each finished dot product).
      const GemmArgs qk{false, false, rows, sh.t, sh.d, h * sh.d, sh.t, sh.t};
      gemm_f32(qk, divide_ ? 1.0f : scale_, q + row_of(sh.s, row0, sh.d), kt + b * sh.d * sh.t, 0.0f, scores, pool);
    } else {
      std::fill_n(scores, rows * sh.t, 0.0f);
    }
    int64_t mask_base = 0;
    if (mask != nullptr) {
      int64_t rest = b;
      for (size_t d = sh.batch.size(); d-- > 0;) {
        mask_base += (rest % sh.batch[d]) * sh.mask_strides[d];
        rest /= sh.batch[d];
      }
    }
    const int64_t mask_row_stride = mask != nullptr ? sh.mask_strides[sh.batch.size()] : 0;
    const int64_t mask_col_stride = mask != nullptr ? sh.mask_strides[sh.batch.size() + 1] : 0;
    for (int64_t i = 0; i < rows; ++i) {
      float* s = scores + i * sh.t;
      if (divide_) {
        for (int64_t j = 0; j < sh.t; ++j) s[j] = s[j] / scale_;
      }
      if (mask != nullptr) {
        const float* m = mask + mask_base + (row0 + i) * mask_row_stride;
        if (mask_col_stride == 1) {
          for (int64_t j = 0; j < sh.t; ++j) s[j] = s[j] + m[j];
        } else {
          for (int64_t j = 0; j < sh.t; ++j) s[j] = s[j] + m[j * mask_col_stride];
        }
      }
    }
    // Softmax numerators; the division by each row's sum is applied to the (narrower) output rows.
    vector_exp_rows(scores, rows, sh.t, sh.t, sums);
    float* const y_rows = y + row_of(sh.s, row0, sh.dv);
    const int64_t ldy = h * sh.dv;
    if (sh.dv > 0) {
      const GemmArgs pv{false, false, rows, sh.dv, sh.t, sh.t, ldy, ldy};
      gemm_f32(pv, 1.0f, scores, v + row_of(sh.t, 0, sh.dv), 0.0f, y_rows, pool);
    }
    const BinaryArrayFn<float> multiply_by_scalar = binary_array_f32(2, 2);
    for (int64_t i = 0; i < rows; ++i) {
      const float inverse = 1.0f / sums[i];
      multiply_by_scalar(y_rows + i * ldy, &inverse, y_rows + i * ldy, sh.dv);
    }
  }

  Expected<AttentionShape> resolve(KernelInputs inputs) const {
    TRY(require_inputs(inputs, 3, description_));
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i] != nullptr && inputs[i]->dtype() != DataType::kFloat32) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input ", i, " must be float, got ",
                          data_type_name(inputs[i]->dtype()));
      }
    }
    if (heads_last_) return resolve_heads_last(inputs);
    const Shape& q = inputs[0]->shape();
    const Shape& kt = inputs[1]->shape();
    const Shape& v = inputs[2]->shape();
    const size_t rank = q.size();
    const bool batches_match = rank >= 2 && kt.size() == rank && v.size() == rank &&
                               std::equal(q.begin(), q.end() - 2, kt.begin()) &&
                               std::equal(q.begin(), q.end() - 2, v.begin());
    if (!batches_match || q[rank - 1] != kt[rank - 2] || kt[rank - 1] != v[rank - 2]) {
      return make_error(StatusCode::kInvalidArgument, description_, ": Q ", shape_to_string(q), ", Kt ",
                        shape_to_string(kt), " and V ", shape_to_string(v),
                        " must be [..., S, D], [..., D, T] and [..., T, Dv] with the same leading dims");
    }
    AttentionShape shape;
    shape.batch.assign(q.begin(), q.end() - 2);
    for (int64_t dim : shape.batch) shape.batch_count *= dim;
    shape.s = q[rank - 2];
    shape.d = q[rank - 1];
    shape.t = kt[rank - 1];
    shape.dv = v[rank - 1];
    TRY(resolve_mask(inputs, shape));
    return shape;
  }

  // Q [B, S, H, D], Kt [B, H, D, T], V [B, T, H, Dv].
  Expected<AttentionShape> resolve_heads_last(KernelInputs inputs) const {
    const Shape& q = inputs[0]->shape();
    const Shape& kt = inputs[1]->shape();
    const Shape& v = inputs[2]->shape();
    if (q.size() != 4 || kt.size() != 4 || v.size() != 4 || kt[0] != q[0] || v[0] != q[0] || kt[1] != q[2] ||
        v[2] != q[2] || kt[2] != q[3] || v[1] != kt[3]) {
      return make_error(StatusCode::kInvalidArgument, description_, ": Q ", shape_to_string(q), ", Kt ",
                        shape_to_string(kt), " and V ", shape_to_string(v),
                        " must be [B, S, H, D], [B, H, D, T] and [B, T, H, Dv] (heads_last)");
    }
    AttentionShape shape;
    shape.batch = {q[0], q[2]};
    shape.batch_count = q[0] * q[2];
    shape.heads = q[2];
    shape.s = q[1];
    shape.d = q[3];
    shape.t = kt[3];
    shape.dv = v[3];
    TRY(resolve_mask(inputs, shape));
    return shape;
  }

  // The mask's strides over [batch..., S, T]; INVALID_ARGUMENT unless it broadcasts there without widening.
  Status resolve_mask(KernelInputs inputs, AttentionShape& shape) const {
    if (const Tensor* mask = optional_input(inputs, 3)) {
      Shape scores = shape.batch;
      scores.push_back(shape.s);
      scores.push_back(shape.t);
      const Shape& m = mask->shape();
      bool fits = m.size() <= scores.size();
      shape.mask_strides.assign(scores.size(), 0);
      int64_t stride = 1;
      for (size_t i = 0; fits && i < m.size(); ++i) {
        const size_t mi = m.size() - 1 - i;
        const size_t si = scores.size() - 1 - i;
        fits = m[mi] == 1 || m[mi] == scores[si];
        if (m[mi] != 1) shape.mask_strides[si] = stride;
        stride *= m[mi];
      }
      if (!fits) {
        return make_error(StatusCode::kInvalidArgument, description_, ": mask ", shape_to_string(m),
                          " does not broadcast to the scores ", shape_to_string(scores));
      }
    }
    return Status::ok();
  }

  std::string description_;
  float scale_;
  bool divide_;
  bool heads_last_;
};

Expected<std::unique_ptr<Kernel>> create_fused_attention(const KernelInfo& info) {
  TRY_ASSIGN(const float scale, info.node.attr_float("scale", 1.0f));
  TRY_ASSIGN(const int64_t divide, info.node.attr_int("divide", 0));
  TRY_ASSIGN(const int64_t heads_last, info.node.attr_int("heads_last", 0));
  return std::unique_ptr<Kernel>(
      std::make_unique<FusedAttentionKernel>(info.node.describe(), scale, divide != 0, heads_last != 0));
}

const KernelDef kFusedAttentionKernels[] = {
    {"FusedAttention", "com.nxrt", 1, kLatestOpset, type_mask(TypeList<float>{}), 0, create_fused_attention},
};

}  // namespace

std::span<const KernelDef> fused_attention_kernels() { return kFusedAttentionKernels; }

}  // namespace nxrt::cpu
