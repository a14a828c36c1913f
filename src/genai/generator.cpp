// Model loading and the generation loop (contracts in generator.h).
#include "genai/generator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>

#include "genai/decoder_tensors.h"
#include "genai/sampling.h"
#include "session/io_binding.h"
#include "session/session.h"

namespace nxrt::genai {

namespace {

const ValueDesc* find_value(const std::vector<ValueDesc>& values, const std::string& name) {
  for (const ValueDesc& v : values) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

Status missing_value(const GenaiConfig& c, std::string_view kind, const std::string& name, std::string_view key) {
  return make_error(StatusCode::kInvalidArgument, c.decoder_path(), ": the decoder has no ", kind, " '", name,
                    "' (genai_config.json ", key, ")");
}

}  // namespace

Model::~Model() = default;

Expected<std::shared_ptr<const Model>> Model::load(const std::string& folder, int threads) {
  auto model = std::shared_ptr<Model>(new Model());
  TRY_ASSIGN(model->config_, load_genai_config(folder));
  const GenaiConfig& c = model->config_;
  SessionOptions options;
  options.intra_op_num_threads = threads > 0 ? threads : static_cast<int>(c.intra_op_num_threads);
  bool logit_positions = false;
  options.edit_graph = [&](graph::Graph& graph) {
    logit_positions = gather_logit_rows(graph, c.names.logits);
    return Status::ok();
  };
  auto session = Session::create_from_file(c.decoder_path(), options);
  if (!session) return session.status().with_context("genai: loading the decoder: ");
  model->session_ = std::move(*session);
  const auto& inputs = model->session_->inputs();
  const auto& outputs = model->session_->outputs();
  Io& io = model->io_;
  const ValueDesc* ids = find_value(inputs, c.names.input_ids);
  if (ids == nullptr) return missing_value(c, "input", c.names.input_ids, "model.decoder.inputs.input_ids");
  io.ids = ids->type.elem_type;
  if (const ValueDesc* mask = find_value(inputs, c.names.attention_mask)) {
    io.has_mask = true;
    io.mask = mask->type.elem_type;
  }
  if (const ValueDesc* positions = find_value(inputs, c.names.position_ids)) {
    io.has_positions = true;
    io.positions = positions->type.elem_type;
  }
  for (const DataType t : {io.ids, io.mask, io.positions}) {
    if (t != DataType::kInt32 && t != DataType::kInt64) {
      return make_error(StatusCode::kNotImplemented, c.decoder_path(), ": ids, masks and positions must be int32 or ",
                        "int64");
    }
  }
  if (find_value(outputs, c.names.logits) == nullptr) {
    return missing_value(c, "output", c.names.logits, "model.decoder.outputs.logits");
  }
  io.combined_cache = !c.names.past_combined.empty();
  for (int64_t layer = 0; layer < c.num_hidden_layers; ++layer) {
    const std::vector<std::pair<std::string, std::string>> pairs =
        io.combined_cache ? std::vector<std::pair<std::string, std::string>>{{c.names.past_combined,
                                                                              c.names.present_combined}}
                          : std::vector<std::pair<std::string, std::string>>{{c.names.past_key, c.names.present_key},
                                                                             {c.names.past_value,
                                                                              c.names.present_value}};
    for (const auto& [past_pattern, present_pattern] : pairs) {
      TRY_ASSIGN(const std::string past, layer_name(past_pattern, layer));
      TRY_ASSIGN(const std::string present, layer_name(present_pattern, layer));
      const ValueDesc* in = find_value(inputs, past);
      if (in == nullptr) return missing_value(c, "input", past, "model.decoder.inputs past names");
      if (find_value(outputs, present) == nullptr) {
        return missing_value(c, "output", present, "model.decoder.outputs present names");
      }
      io.cache = in->type.elem_type;
      io.past.push_back(past);
      io.present.push_back(present);
    }
  }
  io.feeds = {c.names.input_ids};
  if (io.has_mask) io.feeds.push_back(c.names.attention_mask);
  if (io.has_positions) io.feeds.push_back(c.names.position_ids);
  io.feeds.insert(io.feeds.end(), io.past.begin(), io.past.end());
  io.logit_positions = logit_positions;
  if (logit_positions) io.feeds.push_back(kLogitPositionsInput);
  io.fetches = {c.names.logits};
  io.fetches.insert(io.fetches.end(), io.present.begin(), io.present.end());
  if (io.cache != DataType::kFloat32 && io.cache != DataType::kFloat16) {
    return make_error(StatusCode::kNotImplemented, c.decoder_path(), ": key / value caches must be float32 or float16");
  }
  const std::string tokenizer_path = c.folder + "/tokenizer.json";
  if (std::ifstream(tokenizer_path).good()) {
    TRY_ASSIGN(Tokenizer tokenizer, Tokenizer::from_file(tokenizer_path));
    model->tokenizer_ = std::make_unique<Tokenizer>(std::move(tokenizer));
  }
  return std::shared_ptr<const Model>(std::move(model));
}

Generator::Generator(std::shared_ptr<const Model> model, SearchOptions search)
    : model_(std::move(model)), search_(search) {
  random_.seed(search_.random_seed ? *search_.random_seed : std::random_device{}());
}

Expected<std::unique_ptr<Generator>> Generator::create(std::shared_ptr<const Model> model, SearchOptions search) {
  const GenaiConfig& c = model->config();
  if (search.num_beams > 1 && search.do_sample) {
    return make_error(StatusCode::kNotImplemented, "genai: beam search with sampling is not supported");
  }
  if (search.num_return_sequences > std::max<int64_t>(search.num_beams, 1) || search.num_beams > 64) {
    return make_error(StatusCode::kInvalidArgument, "genai: num_return_sequences ", search.num_return_sequences,
                      " must be at most num_beams ", search.num_beams, " (itself at most 64)");
  }
  if (search.max_length <= 0 || search.max_length > c.context_length) {
    return make_error(StatusCode::kInvalidArgument, "genai: max_length ", search.max_length, " must lie in [1, ",
                      "context_length ", c.context_length, "]");
  }
  if (search.do_sample && !(search.temperature > 0.0)) {
    return make_error(StatusCode::kInvalidArgument, "genai: sampling needs a positive temperature");
  }
  if (search.top_p <= 0.0 || search.top_p > 1.0 || search.min_p < 0.0 || search.min_p > 1.0 || search.top_k < 0 ||
      !(search.repetition_penalty > 0.0)) {
    return make_error(StatusCode::kInvalidArgument, "genai: top_p must lie in (0, 1], min_p in [0, 1], top_k be ",
                      "nonnegative and repetition_penalty positive");
  }
  auto generator = std::unique_ptr<Generator>(new Generator(std::move(model), search));
  generator->shared_buffer_ = search.past_present_share_buffer && !generator->model_->io().combined_cache;
  generator->beams_ = std::max<int64_t>(search.num_beams, 1);
  return generator;
}

Status Generator::allocate_cache(int64_t batch) {
  const GenaiConfig& c = model_->config();
  const Model::Io& io = model_->io();
  const int64_t length = shared_buffer_ ? search_.max_length : 0;
  Shape shape = io.combined_cache ? Shape{2, batch, c.num_key_value_heads, length, c.head_size}
                                  : Shape{batch, c.num_key_value_heads, length, c.head_size};
  past_.clear();
  for (size_t i = 0; i < io.past.size(); ++i) {
    TRY_ASSIGN(Tensor t, Tensor::allocate(io.cache, shape));
    if (t.raw_data() != nullptr) std::memset(t.raw_data(), 0, t.storage_bytes());
    past_.push_back(std::move(t));
  }
  return Status::ok();
}

Status Generator::append_tokens(const std::vector<std::vector<int32_t>>& prompts) {
  if (prompts.empty()) return make_error(StatusCode::kInvalidArgument, "genai: append_tokens needs a sequence");
  const bool first = sequences_.empty();
  if (!first && prompts.size() != sequences_.size()) {
    return make_error(StatusCode::kInvalidArgument, "genai: append_tokens got ", prompts.size(),
                      " sequences, the generator has ", sequences_.size());
  }
  const int64_t vocab = model_->config().vocab_size;
  for (size_t b = 0; b < prompts.size(); ++b) {
    if (prompts[b].empty()) return make_error(StatusCode::kInvalidArgument, "genai: sequence ", b, " has no tokens");
    for (const int32_t t : prompts[b]) {
      if (t < 0 || t >= vocab) {
        return make_error(StatusCode::kInvalidArgument, "genai: token ", t, " of sequence ", b,
                          " is outside the vocabulary [0, ", vocab, ")");
      }
    }
  }
  // Lengths count the left padding of a batch, as onnxruntime_genai's do.
  size_t longest = 0;
  for (const auto& p : prompts) longest = std::max(longest, p.size());
  const int64_t waiting = pending_.empty() ? 0 : static_cast<int64_t>(pending_.front().size());
  const int64_t length = cache_length_ + waiting + static_cast<int64_t>(longest);
  if (length > search_.max_length) {
    return make_error(StatusCode::kInvalidArgument, "genai: the sequences would hold ", length,
                      " positions, more than max_length ", search_.max_length);
  }
  if (beams_ > 1 && !first) {
    return make_error(StatusCode::kNotImplemented, "genai: beam search takes its prompts in one append_tokens");
  }
  if (beams_ > 1) {  // each prompt once per beam; only the first beam of each starts with a score of its own
    std::vector<std::vector<int32_t>> rows;
    for (const auto& p : prompts) rows.insert(rows.end(), static_cast<size_t>(beams_), p);
    beam_scores_.assign(rows.size(), -1e9f);
    for (size_t b = 0; b < prompts.size(); ++b) beam_scores_[b * static_cast<size_t>(beams_)] = 0.0f;
    closed_.assign(prompts.size(), {});
    prompt_done_.assign(prompts.size(), false);
    sequences_.assign(rows.size(), {});
    finished_.assign(rows.size(), false);
    TRY(allocate_cache(static_cast<int64_t>(rows.size())));
    pending_.assign(rows.size(), {});
    generated_from_.resize(rows.size());
    for (size_t r = 0; r < rows.size(); ++r) {
      sequences_[r] = rows[r];
      pending_[r] = rows[r];
      generated_from_[r] = rows[r].size();
    }
    return run_decoder(pending_);
  }
  if (first) {
    sequences_.assign(prompts.size(), {});
    finished_.assign(prompts.size(), false);
    TRY(allocate_cache(static_cast<int64_t>(prompts.size())));
  }
  // Tokens generated but not run yet go first; appending reopens sequences that had ended (a new turn).
  if (pending_.empty()) pending_.assign(prompts.size(), {});
  finished_.assign(prompts.size(), false);
  generated_from_.resize(prompts.size());
  for (size_t b = 0; b < prompts.size(); ++b) {
    sequences_[b].insert(sequences_[b].end(), prompts[b].begin(), prompts[b].end());
    pending_[b].insert(pending_[b].end(), prompts[b].begin(), prompts[b].end());
    generated_from_[b] = sequences_[b].size();
  }
  return run_decoder(pending_);
}

Status Generator::run_decoder(const std::vector<std::vector<int32_t>>& tokens) {
  const Model::Io& io = model_->io();
  const int64_t batch = batch_size();
  size_t longest = 0;
  for (const auto& t : tokens) longest = std::max(longest, t.size());
  const int64_t steps = static_cast<int64_t>(longest);
  if (cache_length_ == 0) {
    padding_.assign(static_cast<size_t>(batch), 0);
    for (int64_t b = 0; b < batch; ++b) padding_[static_cast<size_t>(b)] = steps - static_cast<int64_t>(tokens[static_cast<size_t>(b)].size());
  } else if (std::any_of(tokens.begin(), tokens.end(), [&](const auto& t) { return t.size() != longest; })) {
    return make_error(StatusCode::kInvalidArgument, "genai: after the prompt every sequence appends as many tokens");
  }
  const int64_t total = cache_length_ + steps;
  if (total > search_.max_length) {
    return make_error(StatusCode::kInvalidArgument, "genai: ", total, " positions exceed max_length ",
                      search_.max_length);
  }
  TRY_ASSIGN(Tensor ids, Tensor::allocate(io.ids, Shape{batch, steps}));
  for (int64_t b = 0; b < batch; ++b) {
    const auto& row = tokens[static_cast<size_t>(b)];
    const int64_t pad = steps - static_cast<int64_t>(row.size());
    for (int64_t s = 0; s < steps; ++s) {
      put_index(ids, b * steps + s, s < pad ? model_->config().pad_token_id : row[static_cast<size_t>(s - pad)]);
    }
  }
  std::vector<Tensor> inputs{std::move(ids)};
  if (io.has_mask) {
    TRY_ASSIGN(Tensor mask, Tensor::allocate(io.mask, Shape{batch, total}));
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t s = 0; s < total; ++s) put_index(mask, b * total + s, s >= padding_[static_cast<size_t>(b)] ? 1 : 0);
    }
    inputs.push_back(std::move(mask));
  }
  if (io.has_positions) {
    TRY_ASSIGN(Tensor positions, Tensor::allocate(io.positions, Shape{batch, steps}));
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t s = 0; s < steps; ++s) {
        put_index(positions, b * steps + s, std::max<int64_t>(0, cache_length_ + s - padding_[static_cast<size_t>(b)]));
      }
    }
    inputs.push_back(std::move(positions));
  }
  // Views: with the shared buffer the same tensors are bound as the presents.
  inputs.insert(inputs.end(), past_.begin(), past_.end());
  if (io.logit_positions) {  // rows are left-padded: each one's last token is the run's last position
    TRY_ASSIGN(Tensor last, logit_positions_tensor(std::vector<int64_t>(static_cast<size_t>(batch), steps - 1)));
    inputs.push_back(std::move(last));
  }
  std::vector<Tensor> outputs;
  if (shared_buffer_) {
    std::vector<Tensor> bound(io.fetches.size());
    for (size_t i = 0; i < io.present.size(); ++i) bound[i + 1] = past_[i];
    auto result = model_->session().run_bound(io.feeds, inputs, io.fetches, bound);
    if (!result) return result.status().with_context("genai: decoder run: ");
    outputs = std::move(result->outputs);
  } else {
    auto result = model_->session().run(io.feeds, inputs, io.fetches);
    if (!result) return result.status().with_context("genai: decoder run: ");
    outputs = std::move(*result);
    for (size_t i = 0; i < io.present.size(); ++i) past_[i] = std::move(outputs[i + 1]);
  }
  // The logits of the last position of every sequence.
  const Tensor& logits = outputs[0];
  const int64_t vocab = model_->config().vocab_size;
  TRY(check_logits(logits, batch, vocab));
  logits_.resize(static_cast<size_t>(batch * vocab));
  for (int64_t b = 0; b < batch; ++b) last_position_logits(logits, b, vocab, logits_.data() + b * vocab);
  cache_length_ = total;
  logits_fresh_ = true;
  pending_.clear();
  return Status::ok();
}

std::vector<float> Generator::processed_logits(int64_t b) const {
  const int64_t vocab = model_->config().vocab_size;
  std::vector<float> scores(logits_.begin() + b * vocab, logits_.begin() + (b + 1) * vocab);
  apply_penalties(scores, sequences_[static_cast<size_t>(b)], generated_from_[static_cast<size_t>(b)], search_,
                  model_->config().eos_token_ids);
  return scores;
}

int32_t Generator::pick(int64_t b) { return pick_token(processed_logits(b), search_, random_); }

Status Generator::generate_next_token() {
  if (sequences_.empty()) return make_error(StatusCode::kInvalidArgument, "genai: append prompt tokens first");
  if (is_done()) return make_error(StatusCode::kInvalidArgument, "genai: generation is done");
  if (!logits_fresh_) TRY(run_decoder(pending_));
  if (beams_ > 1) return beam_step();
  std::vector<std::vector<int32_t>> next(sequences_.size());
  const auto& eos = model_->config().eos_token_ids;
  for (size_t b = 0; b < sequences_.size(); ++b) {
    // A finished sequence keeps emitting the pad token, as onnxruntime_genai does.
    const int32_t token = finished_[b] ? model_->config().pad_token_id : pick(static_cast<int64_t>(b));
    if (!finished_[b] && std::find(eos.begin(), eos.end(), token) != eos.end()) finished_[b] = true;
    sequences_[b].push_back(token);
    next[b] = {token};
    if (padding_[b] + static_cast<int64_t>(sequences_[b].size()) >= search_.max_length) finished_[b] = true;
  }
  pending_ = std::move(next);
  logits_fresh_ = false;
  return Status::ok();
}

Status Generator::rewind_to(int64_t length) {
  if (batch_size() != 1 || beams_ > 1) {
    return make_error(StatusCode::kNotImplemented, "genai: rewind_to needs a generator of one sequence");
  }
  std::vector<int32_t>& sequence = sequences_[0];
  if (length < 1 || length > static_cast<int64_t>(sequence.size())) {
    return make_error(StatusCode::kInvalidArgument, "genai: rewind_to(", length, ") must lie in [1, ",
                      sequence.size(), "]");
  }
  sequence.resize(static_cast<size_t>(length));
  generated_from_[0] = std::min(generated_from_[0], sequence.size());
  finished_[0] = false;
  const int64_t keep = length - 1;  // the last token is run again for its logits
  if (!shared_buffer_ && keep < cache_length_) {
    // Copy the first `keep` positions of each cache ([B, Nk, S, H], or [2, B, Nk, S, H] combined).
    for (Tensor& past : past_) {
      const Shape& shape = past.shape();
      const size_t axis = shape.size() - 2;
      Shape cut = shape;
      cut[axis] = keep;
      TRY_ASSIGN(Tensor shorter, Tensor::allocate(past.dtype(), cut));
      const size_t row = static_cast<size_t>(shape.back()) * data_type_storage_bytes(past.dtype(), 1);
      int64_t outer = 1;
      for (size_t d = 0; d < axis; ++d) outer *= shape[d];
      for (int64_t o = 0; o < outer; ++o) {
        std::memcpy(static_cast<char*>(shorter.raw_data()) + static_cast<size_t>(o * keep) * row,
                    static_cast<const char*>(past.raw_data()) + static_cast<size_t>(o * shape[axis]) * row,
                    static_cast<size_t>(keep) * row);
      }
      past = std::move(shorter);
    }
  }
  cache_length_ = std::min(cache_length_, keep);
  pending_ = {{sequence.back()}};
  logits_fresh_ = false;
  return Status::ok();
}

bool Generator::is_done() const {
  if (beams_ > 1) return beams_final_;
  return !sequences_.empty() && std::all_of(finished_.begin(), finished_.end(), [](bool f) { return f; });
}

std::vector<int32_t> Generator::next_tokens() const {
  std::vector<int32_t> tokens;
  for (const auto& s : sequences_) tokens.push_back(s.empty() ? -1 : s.back());
  return tokens;
}

}  // namespace nxrt::genai
