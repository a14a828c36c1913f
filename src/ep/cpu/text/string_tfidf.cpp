// TfIdfVectorizer: counts the pool's n-grams in each row of a [C] or [N, C] input of strings or integers.
// The pool lists n-grams grouped by length: ngram_counts[i] is where the (i+1)-grams start. The j-th n-gram of
// the pool (counting every length) lands in output column ngram_indexes[j]. With max_skip_count = s, an n-gram
// may take every (k+1)-th item for k in [0, s]; unigrams are counted once. Weights are indexed by output
// column, as the reference implementation and ONNX Runtime do.
#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

namespace {

enum class TfIdfMode { kTf, kIdf, kTfIdf };

struct TfIdfConfig {
  TfIdfMode mode = TfIdfMode::kTf;
  int64_t min_gram = 1;
  int64_t max_gram = 1;
  int64_t max_skip = 0;
  bool string_pool = false;
  std::unordered_map<std::string, int64_t> string_ids;  // pool string -> id used as its key
  std::vector<std::map<std::vector<int64_t>, int64_t>> grams;  // per length - 1: key sequence -> output column
  std::vector<float> weights;
  int64_t output_size = 0;
};

constexpr int64_t kUnknownKey = -1;

class TfIdfKernel final : public Kernel {
 public:
  TfIdfKernel(std::string description, TfIdfConfig config)
      : description_(std::move(description)), config_(std::move(config)) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    if (inputs.empty() || inputs[0] == nullptr) {
      return make_error(StatusCode::kInvalidArgument, description_, ": missing input 0");
    }
    const Tensor& x = *inputs[0];
    const bool string_input = x.dtype() == DataType::kString;
    if (string_input != config_.string_pool) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 type ", data_type_name(x.dtype()),
                        " does not match the ", config_.string_pool ? "string" : "integer", " pool");
    }
    if (x.rank() > 2 || (x.rank() == 2 && x.shape()[0] < 1)) {
      return make_error(StatusCode::kInvalidArgument, description_, ": input 0 shape ", shape_to_string(x.shape()),
                        " must be [C] or [N, C] with N > 0");
    }
    const Shape out = x.rank() == 2 ? Shape{x.shape()[0], config_.output_size} : Shape{config_.output_size};
    outputs.assign(1, OutputDesc{DataType::kFloat32, out});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    const Tensor& x = *inputs[0];
    const int64_t rows = x.rank() == 2 ? x.shape()[0] : 1;
    const int64_t columns = x.rank() == 0 ? 1 : x.shape().back();
    std::vector<int64_t> keys(static_cast<size_t>(x.numel()));
    if (x.dtype() == DataType::kString) {
      const std::string* in = x.data<std::string>();
      for (size_t i = 0; i < keys.size(); ++i) {
        const auto found = config_.string_ids.find(in[i]);
        keys[i] = found == config_.string_ids.end() ? kUnknownKey : found->second;
      }
    } else if (x.dtype() == DataType::kInt32) {
      for (size_t i = 0; i < keys.size(); ++i) keys[i] = x.data<int32_t>()[i];
    } else {
      for (size_t i = 0; i < keys.size(); ++i) keys[i] = x.data<int64_t>()[i];
    }
    float* y = outputs[0].data<float>();
    std::fill(y, y + outputs[0].numel(), 0.0f);
    pool.parallel_for(rows, 1, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> gram;
      for (int64_t r = begin; r < end; ++r) {
        const int64_t* row = keys.data() + r * columns;
        float* out = y + r * config_.output_size;
        for (int64_t n = config_.min_gram; n <= config_.max_gram; ++n) {
          const auto& table = config_.grams[static_cast<size_t>(n - 1)];
          if (table.empty()) continue;
          const int64_t skips = n == 1 ? 0 : config_.max_skip;
          for (int64_t skip = 0; skip <= skips; ++skip) {
            const int64_t step = skip + 1;
            for (int64_t start = 0; start + (n - 1) * step < columns; ++start) {
              gram.clear();
              for (int64_t k = 0; k < n; ++k) gram.push_back(row[start + k * step]);
              const auto found = table.find(gram);
              if (found != table.end()) out[found->second] += 1.0f;
            }
          }
        }
        for (int64_t c = 0; c < config_.output_size; ++c) {
          const bool weighted = !config_.weights.empty();
          const float w = weighted ? config_.weights[static_cast<size_t>(c)] : 1.0f;
          if (config_.mode == TfIdfMode::kIdf) {
            out[c] = out[c] > 0 ? w : 0.0f;
          } else if (config_.mode == TfIdfMode::kTfIdf) {
            out[c] *= w;
          }
        }
      }
    });
    return Status::ok();
  }

 private:
  std::string description_;
  TfIdfConfig config_;
};

Expected<std::unique_ptr<Kernel>> create_tfidf(const KernelInfo& info) {
  const graph::Node& node = info.node;
  const std::string what = node.describe();
  TfIdfConfig config;
  TRY_ASSIGN(const std::string mode, node.attr_string("mode", ""));
  if (mode == "TF") {
    config.mode = TfIdfMode::kTf;
  } else if (mode == "IDF") {
    config.mode = TfIdfMode::kIdf;
  } else if (mode == "TFIDF") {
    config.mode = TfIdfMode::kTfIdf;
  } else {
    return make_error(StatusCode::kInvalidArgument, what, ": attribute mode = '", mode, "' must be TF, IDF or TFIDF");
  }
  TRY_ASSIGN(config.min_gram, node.attr_int("min_gram_length", 0));
  TRY_ASSIGN(config.max_gram, node.attr_int("max_gram_length", 0));
  TRY_ASSIGN(config.max_skip, node.attr_int("max_skip_count", 0));
  if (config.min_gram < 1 || config.max_gram < config.min_gram || config.max_skip < 0) {
    return make_error(StatusCode::kInvalidArgument, what, ": need 1 <= min_gram_length (", config.min_gram,
                      ") <= max_gram_length (", config.max_gram, ") and max_skip_count (", config.max_skip,
                      ") >= 0");
  }
  TRY_ASSIGN(const std::vector<int64_t> counts, node.attr_ints("ngram_counts", {}));
  TRY_ASSIGN(const std::vector<int64_t> indexes, node.attr_ints("ngram_indexes", {}));
  TRY_ASSIGN(const std::vector<int64_t> pool_ints, node.attr_ints("pool_int64s", {}));
  TRY_ASSIGN(config.weights, node.attr_floats("weights", {}));
  std::vector<std::string> pool_strings;
  if (const graph::Attribute* a = node.find_attribute("pool_strings")) pool_strings = a->strings;
  if (!pool_strings.empty() && !pool_ints.empty()) {
    return make_error(StatusCode::kInvalidArgument, what, ": only one of pool_strings and pool_int64s may be set");
  }
  config.string_pool = !pool_strings.empty();
  std::vector<int64_t> pool_keys = pool_ints;
  if (config.string_pool) {
    for (const std::string& s : pool_strings) {
      const auto inserted = config.string_ids.emplace(s, static_cast<int64_t>(config.string_ids.size()));
      pool_keys.push_back(inserted.first->second);
    }
  }
  for (int64_t index : indexes) {
    if (index < 0) return make_error(StatusCode::kInvalidArgument, what, ": ngram_indexes holds ", index);
    config.output_size = std::max(config.output_size, index + 1);
  }
  if (!config.weights.empty() && static_cast<int64_t>(config.weights.size()) < config.output_size) {
    return make_error(StatusCode::kInvalidArgument, what, ": weights has ", config.weights.size(),
                      " values but the output has ", config.output_size, " columns");
  }
  // n-grams longer than the pool's longest are never counted: the tables (and the loop over lengths) stop there,
  // whatever max_gram_length says.
  config.max_gram = std::min(config.max_gram, static_cast<int64_t>(counts.size()));
  config.grams.resize(static_cast<size_t>(std::max<int64_t>(config.max_gram, 0)));
  const int64_t total = static_cast<int64_t>(pool_keys.size());
  int64_t gram_id = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const int64_t n = static_cast<int64_t>(i) + 1;
    const int64_t begin = counts[i];
    const int64_t end = i + 1 < counts.size() ? counts[i + 1] : total;
    if (begin < 0 || end < begin || end > total || (end - begin) % n != 0) {
      return make_error(StatusCode::kInvalidArgument, what, ": ngram_counts ", begin, " .. ", end,
                        " does not hold whole ", n, "-grams of a pool of ", total);
    }
    for (int64_t at = begin; at < end; at += n, ++gram_id) {
      if (gram_id >= static_cast<int64_t>(indexes.size())) {
        return make_error(StatusCode::kInvalidArgument, what, ": ngram_indexes has ", indexes.size(),
                          " entries, fewer than the pool's n-grams");
      }
      if (n > config.max_gram || n < config.min_gram) continue;
      std::vector<int64_t> gram(pool_keys.begin() + at, pool_keys.begin() + at + n);
      config.grams[static_cast<size_t>(n - 1)].emplace(std::move(gram), indexes[static_cast<size_t>(gram_id)]);
    }
  }
  return std::unique_ptr<Kernel>(std::make_unique<TfIdfKernel>(what, std::move(config)));
}

const KernelDef kTfIdfKernels[] = {
    {"TfIdfVectorizer", graph::kOnnxDomain, 9, kLatestOpset, type_mask(TypeList<std::string, int32_t, int64_t>{}), 0,
     create_tfidf},
};

}  // namespace

std::span<const KernelDef> string_tfidf_kernels() { return kTfIdfKernels; }

}  // namespace nxrt::cpu
