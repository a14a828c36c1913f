// com.nxrt:FusedElementwise (opset 1), produced by the optimizer's elementwise fusion: a straight-line program of
// float or double elementwise ops over inputs that all have one shape.
//   inputs:  tensors of one dtype (float or double) and one shape
//   ops:     strings, one instruction each: Add Sub Mul Div Max Min Pow (binary), Neg Abs Sqrt Exp Log Relu
//            Sigmoid Tanh Reciprocal (unary)
//   operands: ints, two per instruction (-1 for the unused second operand of a unary op). An operand r names
//            input r when r < I, constant r - I when r < I + C, else the result of instruction r - I - C, which
//            must come earlier. I is the input count, C the length of `constants`.
//   constants: tensor attribute, 1-D, of the inputs' dtype (double constants stay exact)
//   results: ints, one per output: the operand number (an instruction result) each output holds
//   node_names: strings, optional, one per instruction: the name of the node it came from (error messages)
//   input_offsets: ints, optional, one per input: -1 for an input of the output's shape; k >= 0 for an input the
//            program reads as the output's element count of contiguous elements starting at element k (a Slice the
//            optimizer absorbed). Offsets >= 0 need `output_shape`.
//   output_shape: ints, optional: the outputs' shape; absent, it is the shape of the inputs
// Instructions run in order with the scalar formulas of the standalone kernels (this file is compiled with
// floating-point contraction off), so results equal the unfused graph's bit for bit. The work is split in chunks
// small enough for the intermediates to stay in L1/L2, chunks in parallel.
#include <algorithm>
#include <type_traits>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/scratch_space.h"
#include "ep/cpu/kernel.h"
#include "ep/cpu/microkernels/vector_math.h"

namespace nxrt::cpu {

namespace {

enum class Op { kAdd, kSub, kMul, kDiv, kMax, kMin, kPow, kNeg, kAbs, kSqrt, kExp, kLog, kRelu, kSigmoid, kTanh,
                kReciprocal };

struct OpName {
  const char* name;
  Op op;
};

constexpr OpName kOps[] = {{"Add", Op::kAdd},   {"Sub", Op::kSub},         {"Mul", Op::kMul},     {"Div", Op::kDiv},
                           {"Max", Op::kMax},   {"Min", Op::kMin},         {"Pow", Op::kPow},     {"Neg", Op::kNeg},
                           {"Abs", Op::kAbs},   {"Sqrt", Op::kSqrt},       {"Exp", Op::kExp},     {"Log", Op::kLog},
                           {"Relu", Op::kRelu}, {"Sigmoid", Op::kSigmoid}, {"Tanh", Op::kTanh},
                           {"Reciprocal", Op::kReciprocal}};

constexpr bool is_binary(Op op) { return op <= Op::kPow; }

template <class T>
inline T apply(Op op, T a, T b) {
  switch (op) {
    case Op::kAdd: return a + b;
    case Op::kSub: return a - b;
    case Op::kMul: return a * b;
    case Op::kDiv: return a / b;
    case Op::kMax: {
      const T r = a < b ? b : a;
      return b != b ? b : r;
    }
    case Op::kMin: {
      const T r = b < a ? b : a;
      return b != b ? b : r;
    }
    case Op::kPow: return std::pow(a, b);
    case Op::kNeg: return -a;
    case Op::kAbs: return std::fabs(a);
    case Op::kSqrt: return std::sqrt(a);
    case Op::kExp: return std::exp(a);
    case Op::kLog: return std::log(a);
    case Op::kRelu: return a < T{0} ? T{0} : a;  // NaN stays NaN, as the Relu kernel
    case Op::kSigmoid: {
      if (a >= T{0}) return T{1} / (T{1} + std::exp(-a));
      const T e = std::exp(a);
      return e / (T{1} + e);
    }
    case Op::kTanh: return std::tanh(a);
    case Op::kReciprocal: return T{1} / a;
  }
  return a;
}

// One operand as the evaluator sees it: a pointer advancing with the element index, or a broadcast scalar.
template <class T>
struct Operand {
  const T* data = nullptr;  // null: use `scalar`
  T scalar{};
};

// The loop body is instantiated per op so that each loop is a plain vectorisable expression.
template <Op O, class T>
void run_op(T* out, Operand<T> a, Operand<T> b, int64_t count) {
  if (a.data && b.data) {
    for (int64_t i = 0; i < count; ++i) out[i] = apply(O, a.data[i], b.data[i]);
  } else if (a.data) {
    const T y = b.scalar;
    for (int64_t i = 0; i < count; ++i) out[i] = apply(O, a.data[i], y);
  } else if (b.data) {
    const T x = a.scalar;
    for (int64_t i = 0; i < count; ++i) out[i] = apply(O, x, b.data[i]);
  } else {
    const T value = apply(O, a.scalar, b.scalar);
    for (int64_t i = 0; i < count; ++i) out[i] = value;
  }
}

// The float transcendental ops go through the same vector math as the standalone Exp, Sigmoid and Tanh kernels,
// so fused and unfused graphs give identical results.
using FloatArrayFn = void (*)(const float*, float*, int64_t);

FloatArrayFn float_vector_op(Op op) {
  switch (op) {
    case Op::kExp: return vector_exp;
    case Op::kSigmoid: return vector_sigmoid;
    case Op::kTanh: return vector_tanh;
    default: return nullptr;
  }
}

template <class T>
void dispatch_op(Op op, T* out, Operand<T> a, Operand<T> b, int64_t count) {
  if constexpr (std::is_same_v<T, float>) {
    if (const FloatArrayFn fn = float_vector_op(op)) {
      if (a.data) return fn(a.data, out, count);
      float value = 0.0f;
      fn(&a.scalar, &value, 1);
      std::fill(out, out + count, value);
      return;
    }
  }
  switch (op) {
#define NXRT_FUSED_CASE(name) \
  case Op::name: return run_op<Op::name>(out, a, b, count);
    NXRT_FUSED_CASE(kAdd)
    NXRT_FUSED_CASE(kSub)
    NXRT_FUSED_CASE(kMul)
    NXRT_FUSED_CASE(kDiv)
    NXRT_FUSED_CASE(kMax)
    NXRT_FUSED_CASE(kMin)
    NXRT_FUSED_CASE(kPow)
    NXRT_FUSED_CASE(kNeg)
    NXRT_FUSED_CASE(kAbs)
    NXRT_FUSED_CASE(kSqrt)
    NXRT_FUSED_CASE(kExp)
    NXRT_FUSED_CASE(kLog)
    NXRT_FUSED_CASE(kRelu)
    NXRT_FUSED_CASE(kSigmoid)
    NXRT_FUSED_CASE(kTanh)
    NXRT_FUSED_CASE(kReciprocal)
#undef NXRT_FUSED_CASE
  }
}

// Where an operand or result lives while a chunk is evaluated.
struct Location {
  enum class Kind { kInput, kConstant, kOutput, kScratch } kind = Kind::kScratch;
  int index = 0;  // input, constant, output or scratch slot number
};

struct Instruction {
  Op op;
  Location a;
  Location b;  // unused (kConstant 0 with `unary` set) for unary ops
  bool unary;
  Location result;
};

class FusedElementwiseKernel final : public Kernel {
 public:
  static Expected<std::unique_ptr<Kernel>> create(const KernelInfo& info);

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.size() != static_cast<size_t>(input_count_)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": expected ", input_count_, " inputs, got ",
                        inputs.size());
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i]) return make_error(StatusCode::kInvalidArgument, description_, ": missing input ", i);
      if (inputs[i]->dtype() != dtype_) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input ", i, " has type ",
                          data_type_name(inputs[i]->dtype()), ", expected ", data_type_name(dtype_));
      }
    }
    Shape shape = output_shape_;
    if (!has_output_shape_) {
      if (inputs.empty()) return make_error(StatusCode::kInvalidArgument, description_, ": no inputs");
      shape = inputs[0]->shape();
    }
    int64_t count = 1;
    for (int64_t d : shape) count *= d;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (input_offsets_[i] < 0) {
        if (inputs[i]->shape() != shape) return shape_mismatch(inputs, shape);
      } else if (input_offsets_[i] + count > inputs[i]->numel()) {
        return make_error(StatusCode::kInvalidArgument, description_, ": input ", i, " has ", inputs[i]->numel(),
                          " elements, fewer than offset ", input_offsets_[i], " + ", count);
      }
    }
    outputs.assign(output_count_, OutputDesc{dtype_, shape});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    if (dtype_ == DataType::kFloat64) {
      evaluate<double>(inputs, outputs, pool);
    } else {
      evaluate<float>(inputs, outputs, pool);
    }
    return Status::ok();
  }

 private:
  // Elements per chunk: with a handful of scratch slots the chunk's intermediates stay within L1/L2.
  static constexpr int64_t kChunkBytes = 4096;

  template <class T>
  void evaluate(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const {
    const int64_t total = output_count_ > 0 ? outputs[0].numel() : 0;
    if (total == 0) return;
    constexpr int64_t kChunk = kChunkBytes / static_cast<int64_t>(sizeof(T));
    // The calling thread's pointer tables (evaluate never nests), read by the tasks.
    const T** const input_table =
        static_cast<const T**>(scratch_buffer(ScratchUse::kFusedInputTable, inputs.size() * sizeof(const T*)));
    T** const output_table =
        static_cast<T**>(scratch_buffer(ScratchUse::kFusedOutputTable, outputs.size() * sizeof(T*)));
    for (size_t i = 0; i < inputs.size(); ++i) {
      input_table[i] = inputs[i]->data<T>() + std::max<int64_t>(input_offsets_[i], 0);
    }
    for (size_t i = 0; i < outputs.size(); ++i) output_table[i] = outputs[i].data<T>();
    const T* const* in = input_table;
    T* const* out = output_table;
    const T* constants = constants_.data<T>();
    const int64_t chunks = (total + kChunk - 1) / kChunk;
    pool.parallel_for(chunks, 1, [&](int64_t first, int64_t last) {
      const size_t register_bytes = static_cast<size_t>(scratch_slots_ * kChunk) * sizeof(T);
      T* const scratch = static_cast<T*>(scratch_buffer(ScratchUse::kFusedRegisters, register_bytes));
      for (int64_t c = first; c < last; ++c) {
        const int64_t begin = c * kChunk;
        const int64_t count = std::min(kChunk, total - begin);
        const auto operand = [&](const Location& at) {
          Operand<T> o;
          switch (at.kind) {
            case Location::Kind::kInput: o.data = in[at.index] + begin; break;
            case Location::Kind::kConstant: o.scalar = constants[at.index]; break;
            case Location::Kind::kOutput: o.data = out[at.index] + begin; break;
            case Location::Kind::kScratch: o.data = scratch + at.index * kChunk; break;
          }
          return o;
        };
        for (const Instruction& instruction : program_) {
          T* target = instruction.result.kind == Location::Kind::kOutput
                          ? out[instruction.result.index] + begin
                          : scratch + instruction.result.index * kChunk;
          const Operand<T> a = operand(instruction.a);
          const Operand<T> b = instruction.unary ? Operand<T>{} : operand(instruction.b);
          dispatch_op<T>(instruction.op, target, a, b, count);
        }
      }
    });
  }

  // Inputs whose symbolic dims matched in the graph but not at run time: names the first original node whose
  // two tensor operands differ, in the executor's wording, so the error points at the model's node.
  Status shape_mismatch(KernelInputs inputs, const Shape& shape) const {
    std::vector<const Shape*> result_shapes(program_.size(), nullptr);
    const auto shape_of = [&](const Location& at, size_t index) -> const Shape* {
      if (at.kind == Location::Kind::kInput) {
        return input_offsets_[at.index] < 0 ? &inputs[at.index]->shape() : &shape;
      }
      if (at.kind == Location::Kind::kConstant) return nullptr;
      return result_shapes[producer_of_[index]];
    };
    for (size_t i = 0; i < program_.size(); ++i) {
      const Shape* a = shape_of(program_[i].a, 2 * i);
      const Shape* b = program_[i].unary ? nullptr : shape_of(program_[i].b, 2 * i + 1);
      if (a && b && *a != *b) {
        return make_error(StatusCode::kInvalidArgument, op_names_[i], " node. Name:'", node_names_[i],
                          "' (fused into ", description_, "): input shapes ", shape_to_string(*a), " and ",
                          shape_to_string(*b), " differ");
      }
      result_shapes[i] = a ? a : b;
    }
    return make_error(StatusCode::kInvalidArgument, description_, ": inputs differ in shape");
  }

  std::string description_;
  std::vector<std::string> op_names_;     // per instruction
  std::vector<std::string> node_names_;   // per instruction, the original node's name
  std::vector<int> producer_of_;          // per operand slot (2 per instruction): the instruction it reads, or -1
  std::vector<int64_t> input_offsets_;    // per input, -1: same shape as the output
  bool has_output_shape_ = false;
  Shape output_shape_;
  DataType dtype_ = DataType::kFloat32;
  int input_count_ = 0;
  int output_count_ = 0;
  int scratch_slots_ = 0;
  Tensor constants_;
  std::vector<Instruction> program_;
};

Expected<std::unique_ptr<Kernel>> FusedElementwiseKernel::create(const KernelInfo& info) {
  auto kernel = std::make_unique<FusedElementwiseKernel>();
  kernel->description_ = info.node.describe();
  const std::string& description = kernel->description_;
  const graph::Attribute* ops = info.node.find_attribute("ops");
  const graph::Attribute* constants = info.node.find_attribute("constants");
  TRY_ASSIGN(std::vector<int64_t> operands, info.node.attr_ints("operands", {}));
  TRY_ASSIGN(std::vector<int64_t> results, info.node.attr_ints("results", {}));
  if (!ops || ops->type != graph::Attribute::Type::kStrings || !constants ||
      constants->type != graph::Attribute::Type::kTensor) {
    return make_error(StatusCode::kInvalidGraph, description, ": needs attributes 'ops' (strings) and 'constants'");
  }
  const DataType dtype = constants->t.dtype();
  if (dtype != DataType::kFloat32 && dtype != DataType::kFloat64) {
    return make_error(StatusCode::kInvalidGraph, description, ": 'constants' must be float or double");
  }
  for (DataType type : info.input_types) {
    if (type != DataType::kUndefined && type != dtype) {
      return make_error(StatusCode::kInvalidGraph, description, ": inputs must have the type of 'constants'");
    }
  }
  const int64_t input_count = static_cast<int64_t>(info.node.inputs.size());
  const int64_t constant_count = constants->t.numel();
  const int64_t result_base = input_count + constant_count;
  const int64_t instruction_count = static_cast<int64_t>(ops->strings.size());
  if (static_cast<int64_t>(operands.size()) != 2 * instruction_count || results.size() != info.node.outputs.size() ||
      instruction_count == 0) {
    return make_error(StatusCode::kInvalidGraph, description, ": 'operands' needs two entries per op and 'results' one per output");
  }
  // Last instruction reading each instruction result, and which output (if any) each result is.
  std::vector<int64_t> last_read(instruction_count, -1);
  std::vector<int> output_of(instruction_count, -1);
  for (size_t o = 0; o < results.size(); ++o) {
    const int64_t r = results[o] - result_base;
    if (r < 0 || r >= instruction_count || output_of[r] >= 0) {
      return make_error(StatusCode::kInvalidGraph, description, ": result ", o, " names no instruction or a taken one");
    }
    output_of[r] = static_cast<int>(o);
  }
  std::vector<Op> codes;
  for (int64_t i = 0; i < instruction_count; ++i) {
    const auto found = std::find_if(std::begin(kOps), std::end(kOps),
                                    [&](const OpName& op) { return ops->strings[i] == op.name; });
    if (found == std::end(kOps)) {
      return make_error(StatusCode::kInvalidGraph, description, ": unknown op '", ops->strings[i], "'");
    }
    codes.push_back(found->op);
    for (int slot = 0; slot < 2; ++slot) {
      const int64_t r = operands[2 * i + slot];
      const bool needed = slot == 0 || is_binary(found->op);
      if (!needed) continue;
      if (r < 0 || r >= result_base + i) {
        return make_error(StatusCode::kInvalidGraph, description, ": op ", i, " operand ", slot, " is out of range");
      }
      if (r >= result_base) last_read[r - result_base] = i;
    }
  }
  // Scratch slots are reused once the value they hold is read for the last time.
  std::vector<int> slot_of(instruction_count, -1);
  std::vector<int> free_slots;
  const auto location = [&](int64_t r) {
    if (r < input_count) return Location{Location::Kind::kInput, static_cast<int>(r)};
    if (r < result_base) return Location{Location::Kind::kConstant, static_cast<int>(r - input_count)};
    const int64_t producer = r - result_base;
    if (output_of[producer] >= 0) return Location{Location::Kind::kOutput, output_of[producer]};
    return Location{Location::Kind::kScratch, slot_of[producer]};
  };
  for (int64_t i = 0; i < instruction_count; ++i) {
    Instruction instruction{codes[i], location(operands[2 * i]), {Location::Kind::kConstant, 0}, !is_binary(codes[i]),
                            {}};
    if (is_binary(codes[i])) instruction.b = location(operands[2 * i + 1]);
    if (output_of[i] >= 0) {
      instruction.result = Location{Location::Kind::kOutput, output_of[i]};
    } else {
      if (free_slots.empty()) free_slots.push_back(kernel->scratch_slots_++);
      slot_of[i] = free_slots.back();
      free_slots.pop_back();
      instruction.result = Location{Location::Kind::kScratch, slot_of[i]};
      if (last_read[i] < 0) free_slots.push_back(slot_of[i]);
    }
    // Operand slots are released only after the result has its own slot: a result never shares storage with
    // an operand, which keeps the loops free of aliasing (and vectorised).
    for (int slot = 0; slot < (is_binary(codes[i]) ? 2 : 1); ++slot) {
      const int64_t r = operands[2 * i + slot] - result_base;
      if (r >= 0 && last_read[r] == i && slot_of[r] >= 0 &&
          std::find(free_slots.begin(), free_slots.end(), slot_of[r]) == free_slots.end()) {
        free_slots.push_back(slot_of[r]);
      }
    }
    kernel->program_.push_back(instruction);
  }
  const graph::Attribute* node_names = info.node.find_attribute("node_names");
  for (int64_t i = 0; i < instruction_count; ++i) {
    kernel->op_names_.push_back(ops->strings[i]);
    const bool named = node_names && node_names->type == graph::Attribute::Type::kStrings &&
                       static_cast<int64_t>(node_names->strings.size()) == instruction_count;
    kernel->node_names_.push_back(named ? node_names->strings[i] : info.node.name);
    for (int slot = 0; slot < 2; ++slot) {
      const int64_t r = operands[2 * i + slot];
      kernel->producer_of_.push_back(r >= result_base ? static_cast<int>(r - result_base) : -1);
    }
  }
  TRY_ASSIGN(kernel->input_offsets_, info.node.attr_ints("input_offsets", std::vector<int64_t>(input_count, -1)));
  if (static_cast<int64_t>(kernel->input_offsets_.size()) != input_count) {
    return make_error(StatusCode::kInvalidGraph, description, ": 'input_offsets' needs one entry per input");
  }
  if (const graph::Attribute* shape = info.node.find_attribute("output_shape")) {
    TRY_ASSIGN(std::vector<int64_t> dims, info.node.attr_ints("output_shape", {}));
    if (std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d < 0; })) {
      return make_error(StatusCode::kInvalidGraph, description, ": 'output_shape' has a negative dim");
    }
    kernel->has_output_shape_ = shape != nullptr;
    kernel->output_shape_ = Shape(dims.begin(), dims.end());
  }
  for (int64_t offset : kernel->input_offsets_) {
    if (offset < -1 || (offset >= 0 && !kernel->has_output_shape_)) {
      return make_error(StatusCode::kInvalidGraph, description, ": input offsets need 'output_shape' and must be >= -1");
    }
  }
  kernel->dtype_ = dtype;
  kernel->input_count_ = static_cast<int>(input_count);
  kernel->output_count_ = static_cast<int>(results.size());
  kernel->constants_ = constants->t;
  return std::unique_ptr<Kernel>(std::move(kernel));
}

const KernelDef kFusedElementwiseKernels[] = {
    {"FusedElementwise", "com.nxrt", 1, kLatestOpset, type_mask(TypeList<float, double>{}), 0,
     FusedElementwiseKernel::create},
};

}  // namespace

std::span<const KernelDef> fused_elementwise_kernels() { return kFusedElementwiseKernels; }

}  // namespace nxrt::cpu
