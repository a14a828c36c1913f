// Slice, Pad, Expand and Tile. All map every output coordinate, axis by axis, to an input coordinate (or to the pad value),
// so one gather routine serves them: per-axis index maps, contiguous runs of the innermost axis copied whole.
#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ep/cpu/tensor/data_movement.h"
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

namespace {

constexpr int64_t kFill = -1;

// maps[d][i]: input index along axis d for output index i, or kFill.
struct GatherPlan {
  Shape out_shape;
  std::vector<std::vector<int64_t>> maps;
  std::vector<int64_t> in_strides;  // per output axis; empty: the input's row-major strides (same rank)
};

// Innermost-axis run: out[out_begin + i] = in[in_begin + i * step] for i < length (step 1: a contiguous copy; 0:
// in[in_begin] repeated, a broadcast; others: a strided gather such as Slice's steps), or kFill pads.
struct InnerRun {
  int64_t out_begin;
  int64_t length;
  int64_t in_begin;
  int64_t step;
};

std::vector<InnerRun> inner_runs(const std::vector<int64_t>& map) {
  std::vector<InnerRun> runs;
  for (int64_t i = 0; i < static_cast<int64_t>(map.size()); ++i) {
    const int64_t source = map[static_cast<size_t>(i)];
    if (!runs.empty()) {
      InnerRun& last = runs.back();
      if (source == kFill || last.in_begin == kFill) {
        if (source == last.in_begin) {
          ++last.length;
          continue;
        }
      } else if (last.length == 1) {
        last.step = source - last.in_begin;
        ++last.length;
        continue;
      } else if (source == last.in_begin + last.step * last.length) {
        ++last.length;
        continue;
      }
    }
    runs.push_back(InnerRun{i, 1, source, 1});
  }
  return runs;
}

template <class T>
void gather_axes(const Tensor& input, Tensor& output, const GatherPlan& plan, const T& fill, ThreadPool& pool) {
  const size_t rank = plan.out_shape.size();
  const T* in = input.data<T>();
  T* out = output.data<T>();
  if (rank == 0) {
    out[0] = in[0];
    return;
  }
  const std::vector<int64_t> in_strides =
      plan.in_strides.empty() ? row_major_strides(input.shape()) : plan.in_strides;
  const int64_t inner = plan.out_shape.back();
  const int64_t rows = output.numel() / inner;
  const std::vector<InnerRun> runs = inner_runs(plan.maps.back());
  pool.parallel_for(rows, std::max<int64_t>(1, kMoveGrain / inner), [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      T* dst = out + row * inner;
      int64_t rest = row;
      int64_t offset = 0;
      bool padded = false;
      for (size_t d = rank - 1; d-- > 0;) {
        const int64_t dim = plan.out_shape[d];
        const int64_t source = plan.maps[d][static_cast<size_t>(rest % dim)];
        rest /= dim;
        if (source == kFill) padded = true;
        else offset += source * in_strides[d];
      }
      if (padded) {
        std::fill(dst, dst + inner, fill);
        continue;
      }
      const T* src = in + offset;
      for (const InnerRun& run : runs) {
        T* run_dst = dst + run.out_begin;
        if (run.in_begin == kFill) std::fill(run_dst, run_dst + run.length, fill);
        else if (run.step == 1) copy_elements(src + run.in_begin, run_dst, run.length);
        else if (run.step == 0) std::fill(run_dst, run_dst + run.length, src[run.in_begin]);
        else {
          const T* run_src = src + run.in_begin;
          for (int64_t i = 0; i < run.length; ++i) run_dst[i] = run_src[i * run.step];
        }
      }
    }
  });
}

// `fill_value`: one element of the input's type, or null for zero / empty string.
Status run_gather(const std::string& description, const Tensor& input, Tensor& output, const GatherPlan& plan,
                  const void* fill_value, ThreadPool& pool) {
  if (output.numel() == 0) return Status::ok();
  const bool ok = visit_element_size(input.dtype(), [&]<class T>() {
    T fill{};
    if (fill_value != nullptr) fill = *static_cast<const T*>(fill_value);
    gather_axes<T>(input, output, plan, fill, pool);
  });
  return ok ? Status::ok() : unsupported_type(description, 0, input.dtype());
}

// ---- Slice -------------------------------------------------------------------------------------------------

struct SliceAttributes {
  std::vector<int64_t> starts, ends, axes;
  bool has_axes = false;
};

class SliceKernel final : public Kernel {
 public:
  SliceKernel(std::string description, std::optional<SliceAttributes> attributes)
      : description_(std::move(description)), attributes_(std::move(attributes)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(GatherPlan plan, make_plan(inputs, false));
    outputs.assign(1, OutputDesc{inputs[0]->dtype(), std::move(plan.out_shape)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    SliceBox box;
    TRY_ASSIGN(const GatherPlan shape_only, make_plan(inputs, false, &box));
    const Tensor& x = *inputs[0];
    const bool unit_steps = std::all_of(box.step.begin(), box.step.end(), [](int64_t step) { return step == 1; });
    if (unit_steps && x.rank() > 0 && shape_only.out_shape.back() >= kMinContiguousRun &&
        x.dtype() != DataType::kString && data_type_bits(x.dtype()) % 8 == 0) {
      copy_box(x, outputs[0], box, pool);
      return Status::ok();
    }
    TRY_ASSIGN(const GatherPlan plan, make_plan(inputs, true));
    return run_gather(description_, x, outputs[0], plan, nullptr, pool);
  }

 private:
  // Innermost runs at least this long are copied directly when every step is 1 (no index maps).
  static constexpr int64_t kMinContiguousRun = 16;

  // First index and step per input axis of the sliced region.
  struct SliceBox {
    std::vector<int64_t> start;
    std::vector<int64_t> step;
  };

  // Copies the unit-step box of `x` into `out`: row-major rows of the output, each a contiguous run of the input,
  // split into parallel chunks of the flat output (so a single long row also spreads over the threads).
  static void copy_box(const Tensor& x, Tensor& out, const SliceBox& box, ThreadPool& pool) {
    const int64_t numel = out.numel();
    if (numel == 0) return;
    const size_t rank = x.rank();
    const auto element = static_cast<int64_t>(data_type_bits(x.dtype()) / 8);
    const std::vector<int64_t> in_strides = row_major_strides(x.shape());
    const Shape& out_shape = out.shape();
    const int64_t inner = out_shape[rank - 1];
    const auto* src = static_cast<const char*>(x.raw_data());
    auto* dst = static_cast<char*>(out.raw_data());
    pool.parallel_for(numel, kMoveGrain, [&](int64_t begin, int64_t end) {
      int64_t position = begin;
      while (position < end) {
        int64_t row = position / inner;
        const int64_t column = position % inner;
        const int64_t length = std::min(inner - column, end - position);
        int64_t offset = box.start[rank - 1] + column;
        for (size_t d = rank - 1; d-- > 0;) {
          offset += (box.start[d] + row % out_shape[d]) * in_strides[d];
          row /= out_shape[d];
        }
        std::memcpy(dst + position * element, src + offset * element, static_cast<size_t>(length * element));
        position += length;
      }
    });
  }

  Expected<GatherPlan> make_plan(KernelInputs inputs, bool with_maps, SliceBox* box = nullptr) const {
    const auto input = [&](size_t i) { return optional_input(inputs, i); };
    if (input(0) == nullptr) return make_error(StatusCode::kInvalidArgument, description_, ": missing input 0");
    const Tensor& x = *inputs[0];
    if (!movable_type(x.dtype())) return unsupported_type(description_, 0, x.dtype());
    const int64_t rank = static_cast<int64_t>(x.rank());
    std::vector<int64_t> starts, ends, axes, steps;
    bool has_axes = false;
    if (attributes_) {
      starts = attributes_->starts;
      ends = attributes_->ends;
      axes = attributes_->axes;
      has_axes = attributes_->has_axes;
    } else {
      if (input(1) == nullptr || input(2) == nullptr) {
        return make_error(StatusCode::kInvalidArgument, description_, ": inputs 1 (starts) and 2 (ends) are required");
      }
      TRY_ASSIGN(starts, read_int_values(*inputs[1], description_, 1, "starts"));
      TRY_ASSIGN(ends, read_int_values(*inputs[2], description_, 2, "ends"));
      if (input(3) != nullptr) {
        TRY_ASSIGN(axes, read_int_values(*inputs[3], description_, 3, "axes"));
        has_axes = true;
      }
      if (input(4) != nullptr) {
        TRY_ASSIGN(steps, read_int_values(*inputs[4], description_, 4, "steps"));
      }
    }
    const size_t count = starts.size();
    if (!has_axes) {
      axes.resize(count);
      for (size_t i = 0; i < count; ++i) axes[i] = static_cast<int64_t>(i);
    }
    if (steps.empty()) steps.assign(count, 1);
    if (ends.size() != count || axes.size() != count || steps.size() != count) {
      return make_error(StatusCode::kInvalidArgument, description_, ": starts ", shape_to_string(starts), ", ends ",
                        shape_to_string(ends), ", axes ", shape_to_string(axes), " and steps ", shape_to_string(steps),
                        " must have the same length");
    }
    GatherPlan plan;
    plan.out_shape = x.shape();
    plan.maps.resize(static_cast<size_t>(rank));
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    std::vector<int64_t> start_of(static_cast<size_t>(rank), 0), step_of(static_cast<size_t>(rank), 1);
    for (size_t i = 0; i < count; ++i) {
      TRY_ASSIGN(const int64_t axis, normalize_axis(axes[i], rank, description_, "axes value"));
      if (seen[static_cast<size_t>(axis)]) {
        return make_error(StatusCode::kInvalidArgument, description_, ": axes ", shape_to_string(axes),
                          " repeat axis ", axes[i]);
      }
      seen[static_cast<size_t>(axis)] = true;
      const int64_t step = steps[i];
      if (step == 0) return make_error(StatusCode::kInvalidArgument, description_, ": steps must not be 0");
      const int64_t dim = x.shape()[static_cast<size_t>(axis)];
      int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
      int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
      __int128 length = 0;
      if (step > 0) {
        start = std::clamp<int64_t>(start, 0, dim);
        end = std::clamp<int64_t>(end, 0, dim);
        if (end > start) length = (static_cast<__int128>(end) - start + step - 1) / step;
      } else {
        start = std::clamp<int64_t>(start, -1, dim - 1);
        end = std::clamp<int64_t>(end, -1, dim - 1);
        if (start > end) length = (static_cast<__int128>(start) - end - static_cast<__int128>(step) - 1) /
                                  -static_cast<__int128>(step);
      }
      plan.out_shape[static_cast<size_t>(axis)] = static_cast<int64_t>(length);
      start_of[static_cast<size_t>(axis)] = start;
      step_of[static_cast<size_t>(axis)] = step;
    }
    if (box != nullptr) {
      box->start = std::move(start_of);
      box->step = std::move(step_of);
      return plan;
    }
    for (int64_t d = 0; with_maps && d < rank; ++d) {
      std::vector<int64_t>& map = plan.maps[static_cast<size_t>(d)];
      map.resize(static_cast<size_t>(plan.out_shape[static_cast<size_t>(d)]));
      for (size_t i = 0; i < map.size(); ++i) {
        map[i] = start_of[static_cast<size_t>(d)] + static_cast<int64_t>(i) * step_of[static_cast<size_t>(d)];
      }
    }
    return plan;
  }

  std::string description_;
  std::optional<SliceAttributes> attributes_;  // opset 1
};

// ---- Pad ---------------------------------------------------------------------------------------------------

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

class PadKernel final : public Kernel {
 public:
  PadKernel(std::string description, PadMode mode, std::optional<std::vector<int64_t>> pads, float value)
      : description_(std::move(description)), mode_(mode), pads_(std::move(pads)), value_(std::move(value)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(GatherPlan plan, make_plan(inputs, false));
    outputs.assign(1, OutputDesc{inputs[0]->dtype(), std::move(plan.out_shape)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const GatherPlan plan, make_plan(inputs, true));
    const DataType type = inputs[0]->dtype();
    const void* fill = nullptr;
    float f32 = value_;
    double f64 = value_;
    Float16 f16(value_);
    if (pads_) {
      if (type == DataType::kFloat32) fill = &f32;
      else if (type == DataType::kFloat64) fill = &f64;
      else if (type == DataType::kFloat16) fill = &f16;
    } else if (inputs.size() > 2 && inputs[2] != nullptr && inputs[2]->numel() == 1) {
      fill = inputs[2]->raw_data();
    }
    return run_gather(description_, *inputs[0], outputs[0], plan, fill, pool);
  }

 private:
  Expected<GatherPlan> make_plan(KernelInputs inputs, bool with_maps) const {
    const auto input = [&](size_t i) { return optional_input(inputs, i); };
    if (input(0) == nullptr) return make_error(StatusCode::kInvalidArgument, description_, ": missing input 0");
    const Tensor& x = *inputs[0];
    if (!movable_type(x.dtype())) return unsupported_type(description_, 0, x.dtype());
    const int64_t rank = static_cast<int64_t>(x.rank());
    std::vector<int64_t> pads;
    if (pads_) {
      pads = *pads_;
    } else {
      if (input(1) == nullptr) return make_error(StatusCode::kInvalidArgument, description_, ": missing input 1 (pads)");
      TRY_ASSIGN(pads, read_int_values(*inputs[1], description_, 1, "pads"));
      if (input(2) != nullptr) {
        if (inputs[2]->dtype() != x.dtype() || inputs[2]->numel() > 1) {
          return make_error(StatusCode::kInvalidArgument, description_, ": input 2 (constant_value) must be a ",
                            data_type_name(x.dtype()), " scalar, got ", data_type_name(inputs[2]->dtype()), " shape ",
                            shape_to_string(inputs[2]->shape()));
        }
      }
    }
    std::vector<int64_t> axes;
    if (input(3) != nullptr) {
      TRY_ASSIGN(axes, read_int_values(*inputs[3], description_, 3, "axes"));
    } else {
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    }
    if (pads.size() != 2 * axes.size()) {
      return make_error(StatusCode::kInvalidArgument, description_, ": pads ", shape_to_string(pads), " must have ",
                        2 * axes.size(), " values for input 0 shape ", shape_to_string(x.shape()));
    }
    std::vector<int64_t> before(static_cast<size_t>(rank), 0), after(static_cast<size_t>(rank), 0);
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (size_t i = 0; i < axes.size(); ++i) {
      TRY_ASSIGN(const int64_t axis, normalize_axis(axes[i], rank, description_, "axes value"));
      if (seen[static_cast<size_t>(axis)]) {
        return make_error(StatusCode::kInvalidArgument, description_, ": axes repeat axis ", axes[i]);
      }
      seen[static_cast<size_t>(axis)] = true;
      before[static_cast<size_t>(axis)] = pads[i];
      after[static_cast<size_t>(axis)] = pads[i + axes.size()];
    }
    GatherPlan plan;
    plan.out_shape.resize(static_cast<size_t>(rank));
    plan.maps.resize(static_cast<size_t>(rank));
    constexpr int64_t kLimit = int64_t{1} << 40;
    for (size_t d = 0; d < static_cast<size_t>(rank); ++d) {
      const int64_t dim = x.shape()[d];
      if (before[d] > kLimit || after[d] > kLimit || before[d] < -kLimit || after[d] < -kLimit) {
        return make_error(StatusCode::kInvalidArgument, description_, ": pads ", shape_to_string(pads),
                          " are out of range");
      }
      // Negative pads remove elements first; the positive ones then pad what is left (reflect and wrap repeat
      // the remaining elements, as onnxruntime does: wrap of [1, 2, 3, 4] with pads [-1, 1] is [2, 3, 4, 2]).
      const int64_t kept = dim + std::min<int64_t>(before[d], 0) + std::min<int64_t>(after[d], 0);
      if (kept < 0) {
        return make_error(StatusCode::kInvalidArgument, description_, ": pads ", shape_to_string(pads),
                          " remove more than input 0 shape ", shape_to_string(x.shape()), " holds on axis ", d);
      }
      const int64_t out_dim = dim + before[d] + after[d];
      if (kept == 0 && out_dim > 0 && mode_ != PadMode::kConstant) {
        return make_error(StatusCode::kInvalidArgument, description_, ": cannot pad empty axis ", d,
                          " in a non-constant mode");
      }
      plan.out_shape[d] = out_dim;
    }
    const std::optional<int64_t> out_count = checked_numel(plan.out_shape);
    if (!out_count) {
      return make_error(StatusCode::kInvalidArgument, description_, ": output shape ",
                        shape_to_string(plan.out_shape), " is too large");
    }
    // Maps are built only once the output exists (run), so a huge requested shape fails at allocation; an empty
    // output needs none (its other dims may be huge: [0, 2^40]).
    for (size_t d = 0; with_maps && *out_count > 0 && d < static_cast<size_t>(rank); ++d) {
      std::vector<int64_t>& map = plan.maps[d];
      map.resize(static_cast<size_t>(plan.out_shape[d]));
      const int64_t first_kept = std::max<int64_t>(-before[d], 0);
      const int64_t kept = x.shape()[d] - first_kept - std::max<int64_t>(-after[d], 0);
      const int64_t added_before = std::max<int64_t>(before[d], 0);
      for (int64_t i = 0; i < plan.out_shape[d]; ++i) {
        const int64_t source = source_index(i - added_before, kept);
        map[static_cast<size_t>(i)] = source == kFill ? kFill : first_kept + source;
      }
    }
    return plan;
  }

  // The index into the kept elements (`dim` of them) that position j of the padded axis repeats (j in [0, dim):
  // itself), or kFill for the constant mode.
  int64_t source_index(int64_t j, int64_t dim) const {
    if (j >= 0 && j < dim) return j;
    switch (mode_) {
      case PadMode::kConstant: return kFill;
      case PadMode::kEdge: return j < 0 ? 0 : dim - 1;
      case PadMode::kWrap: return ((j % dim) + dim) % dim;
      case PadMode::kReflect: {
        if (dim == 1) return 0;
        const int64_t period = 2 * (dim - 1);
        const int64_t k = ((j % period) + period) % period;
        return k < dim ? k : period - k;
      }
    }
    return kFill;
  }

  std::string description_;
  PadMode mode_;
  std::optional<std::vector<int64_t>> pads_;  // opsets 1 and 2 (attribute)
  float value_;                                // opsets 1 and 2: the 'value' attribute
};

// ---- Expand and Tile ---------------------------------------------------------------------------------------

// Expand broadcasts input 0 against the shape in input 1; Tile repeats it (repeats from input 1, or opset 1's
// tiles/axis inputs).
class RepeatKernel final : public Kernel {
 public:
  RepeatKernel(std::string description, bool tile, bool tile_v1)
      : description_(std::move(description)), tile_(tile), tile_v1_(tile_v1) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(GatherPlan plan, make_plan(inputs, false));
    outputs.assign(1, OutputDesc{inputs[0]->dtype(), std::move(plan.out_shape)});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const GatherPlan plan, make_plan(inputs, true));
    return run_gather(description_, *inputs[0], outputs[0], plan, nullptr, pool);
  }

 private:
  Expected<GatherPlan> make_plan(KernelInputs inputs, bool with_maps) const {
    TRY(require_inputs(inputs, tile_v1_ ? 3 : 2, description_));
    const Tensor& x = *inputs[0];
    if (!movable_type(x.dtype())) return unsupported_type(description_, 0, x.dtype());
    const int64_t rank = static_cast<int64_t>(x.rank());
    GatherPlan plan;
    if (tile_) {
      std::vector<int64_t> repeats;
      if (tile_v1_) {
        TRY_ASSIGN(const std::vector<int64_t> tiles, read_int_values(*inputs[1], description_, 1, "tiles"));
        TRY_ASSIGN(const std::vector<int64_t> axis, read_int_values(*inputs[2], description_, 2, "axis"));
        if (tiles.size() != 1 || axis.size() != 1) {
          return make_error(StatusCode::kInvalidArgument, description_, ": tiles and axis must be scalars");
        }
        TRY_ASSIGN(const int64_t a, normalize_axis(axis[0], rank, description_, "axis"));
        repeats.assign(static_cast<size_t>(rank), 1);
        repeats[static_cast<size_t>(a)] = tiles[0];
      } else {
        TRY_ASSIGN(repeats, read_int_values(*inputs[1], description_, 1, "repeats"));
      }
      if (static_cast<int64_t>(repeats.size()) != rank) {
        return make_error(StatusCode::kInvalidArgument, description_, ": repeats ", shape_to_string(repeats),
                          " must have one value per dimension of input 0 shape ", shape_to_string(x.shape()));
      }
      plan.out_shape.resize(static_cast<size_t>(rank));
      for (size_t d = 0; d < repeats.size(); ++d) {
        if (repeats[d] < 0 || __builtin_mul_overflow(x.shape()[d], repeats[d], &plan.out_shape[d])) {
          return make_error(StatusCode::kInvalidArgument, description_, ": invalid repeats ", shape_to_string(repeats));
        }
      }
    } else {
      TRY_ASSIGN(const std::vector<int64_t> shape, read_int_values(*inputs[1], description_, 1, "shape"));
      for (const int64_t dim : shape) {
        if (dim < 0) {
          return make_error(StatusCode::kInvalidArgument, description_, ": input 1 (shape) ", shape_to_string(shape),
                            " has a negative dimension");
        }
      }
      const std::optional<Shape> out = broadcast_shapes(x.shape(), shape);
      if (!out) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input 0 shape ", shape_to_string(x.shape()),
                          " cannot be expanded to ", shape_to_string(shape));
      }
      plan.out_shape = *out;
    }
    const std::optional<int64_t> out_count = checked_numel(plan.out_shape);
    if (!out_count) {
      return make_error(StatusCode::kInvalidArgument, description_, ": output shape ",
                        shape_to_string(plan.out_shape), " is too large");
    }
    const size_t out_rank = plan.out_shape.size();
    const size_t lead = out_rank - static_cast<size_t>(rank);
    Shape in_shape(lead, 1);
    in_shape.insert(in_shape.end(), x.shape().begin(), x.shape().end());
    plan.in_strides = row_major_strides(in_shape);
    plan.maps.resize(out_rank);
    for (size_t d = 0; with_maps && *out_count > 0 && d < out_rank; ++d) {
      const int64_t in_dim = in_shape[d];
      std::vector<int64_t>& map = plan.maps[d];
      map.resize(static_cast<size_t>(plan.out_shape[d]));
      for (size_t i = 0; i < map.size(); ++i) map[i] = in_dim == 0 ? 0 : static_cast<int64_t>(i) % in_dim;
    }
    return plan;
  }

  std::string description_;
  bool tile_;
  bool tile_v1_;
};

Expected<std::unique_ptr<Kernel>> create_expand(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(std::make_unique<RepeatKernel>(info.node.describe(), false, false));
}

Expected<std::unique_ptr<Kernel>> create_tile(const KernelInfo& info) {
  return std::unique_ptr<Kernel>(std::make_unique<RepeatKernel>(info.node.describe(), true, info.opset() < 6));
}

Expected<std::unique_ptr<Kernel>> create_slice(const KernelInfo& info) {
  std::optional<SliceAttributes> attributes;
  if (info.opset() < 10) {
    SliceAttributes a;
    TRY_ASSIGN(a.starts, info.node.attr_ints("starts", {}));
    TRY_ASSIGN(a.ends, info.node.attr_ints("ends", {}));
    a.has_axes = info.node.find_attribute("axes") != nullptr;
    TRY_ASSIGN(a.axes, info.node.attr_ints("axes", {}));
    attributes = std::move(a);
  }
  return std::unique_ptr<Kernel>(std::make_unique<SliceKernel>(info.node.describe(), std::move(attributes)));
}

Expected<std::unique_ptr<Kernel>> create_pad(const KernelInfo& info) {
  const graph::Node& node = info.node;
  TRY_ASSIGN(const std::string mode_name, node.attr_string("mode", "constant"));
  PadMode mode;
  if (mode_name == "constant") mode = PadMode::kConstant;
  else if (mode_name == "reflect") mode = PadMode::kReflect;
  else if (mode_name == "edge") mode = PadMode::kEdge;
  else if (mode_name == "wrap" && info.opset() >= 19) mode = PadMode::kWrap;
  else return make_error(StatusCode::kInvalidGraph, node.describe(), ": unsupported mode '", mode_name, "'");
  std::optional<std::vector<int64_t>> pads;
  float value = 0.0f;
  if (info.opset() < 11) {
    const char* name = info.opset() < 2 ? "paddings" : "pads";
    if (node.find_attribute(name) == nullptr) {
      return make_error(StatusCode::kInvalidGraph, node.describe(), ": required attribute '", name, "' is missing");
    }
    TRY_ASSIGN(pads, node.attr_ints(name, {}));
    TRY_ASSIGN(value, node.attr_float("value", 0.0f));
  }
  return std::unique_ptr<Kernel>(std::make_unique<PadKernel>(node.describe(), mode, std::move(pads), value));
}

const KernelDef kSlicePadKernels[] = {
    {"Slice", graph::kOnnxDomain, 1, kLatestOpset, kAnyType, 0, create_slice},
    {"Pad", graph::kOnnxDomain, 1, kLatestOpset, kAnyType, 0, create_pad},
    {"Expand", graph::kOnnxDomain, 8, kLatestOpset, kAnyType, 0, create_expand},
    {"Tile", graph::kOnnxDomain, 1, kLatestOpset, kAnyType, 0, create_tile},
};

}  // namespace

std::span<const KernelDef> slice_pad_kernels() { return kSlicePadKernels; }

}  // namespace nxrt::cpu
