// Continuous batching (contracts in batch_engine.h).
#include "genai/batch_engine.h"

#include <algorithm>
#include <cstring>

#include "genai/decoder_tensors.h"
#include "graph/graph.h"
#include "session/io_binding.h"
#include "session/session.h"

namespace nxrt::genai {

namespace {

bool uses_group_query_attention(const Session& session) {
  for (const graph::Node& node : session.graph().nodes) {
    if (node.op_type == "GroupQueryAttention") return true;
  }
  return false;
}

}  // namespace

BatchEngine::BatchEngine(std::shared_ptr<const Model> model, int64_t max_batch)
    : model_(std::move(model)), max_batch_(max_batch) {}

Expected<std::unique_ptr<BatchEngine>> BatchEngine::create(std::shared_ptr<const Model> model, int64_t max_batch) {
  if (max_batch < 1 || max_batch > 4096) {
    return make_error(StatusCode::kInvalidArgument, "genai: max_batch ", max_batch, " must lie in [1, 4096]");
  }
  if (!model->io().has_mask) max_batch = 1;
  auto engine = std::unique_ptr<BatchEngine>(new BatchEngine(std::move(model), max_batch));
  engine->rows_start_at_zero_ = uses_group_query_attention(engine->model_->session());
  engine->shared_ = engine->rows_start_at_zero_ && !engine->model_->io().combined_cache;
  return engine;
}

Expected<Tensor> BatchEngine::empty_cache(int64_t batch, int64_t width) const {
  const GenaiConfig& c = model_->config();
  const Model::Io& io = model_->io();
  const Shape shape = io.combined_cache ? Shape{2, batch, c.num_key_value_heads, width, c.head_size}
                                       : Shape{batch, c.num_key_value_heads, width, c.head_size};
  TRY_ASSIGN(Tensor t, Tensor::allocate(io.cache, shape));
  if (t.raw_data() != nullptr) std::memset(t.raw_data(), 0, t.storage_bytes());
  return t;
}

Expected<std::vector<Tensor>> BatchEngine::run_decoder(const std::vector<std::vector<int32_t>>& ids,
                                                       const std::vector<int64_t>& lengths,
                                                       const std::vector<Tensor>& past, int64_t width,
                                                       const std::vector<int64_t>& new_tokens) {
  const Model::Io& io = model_->io();
  const int64_t batch = static_cast<int64_t>(ids.size());
  const int64_t steps = static_cast<int64_t>(ids[0].size());
  const int64_t total = width + steps;
  TRY_ASSIGN(Tensor id_tensor, Tensor::allocate(io.ids, Shape{batch, steps}));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t s = 0; s < steps; ++s) put_index(id_tensor, b * steps + s, ids[static_cast<size_t>(b)][static_cast<size_t>(s)]);
  }
  std::vector<Tensor> inputs{std::move(id_tensor)};
  if (io.has_mask) {
    // Row b holds lengths[b] cached positions, then its new ones: from 0 (GroupQueryAttention) or right-aligned.
    TRY_ASSIGN(Tensor mask, Tensor::allocate(io.mask, Shape{batch, total}));
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t fresh = new_tokens.empty() ? steps : new_tokens[static_cast<size_t>(b)];
      const int64_t valid = lengths[static_cast<size_t>(b)] + fresh;
      const int64_t first = rows_start_at_zero_ ? 0 : total - valid;
      for (int64_t s = 0; s < total; ++s) put_index(mask, b * total + s, s >= first && s < first + valid ? 1 : 0);
    }
    inputs.push_back(std::move(mask));
  }
  if (io.has_positions) {
    TRY_ASSIGN(Tensor positions, Tensor::allocate(io.positions, Shape{batch, steps}));
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t s = 0; s < steps; ++s) put_index(positions, b * steps + s, lengths[static_cast<size_t>(b)] + s);
    }
    inputs.push_back(std::move(positions));
  }
  inputs.insert(inputs.end(), past.begin(), past.end());
  if (io.logit_positions) {  // each row's last new token
    std::vector<int64_t> last(static_cast<size_t>(batch), steps - 1);
    for (size_t b = 0; b < new_tokens.size(); ++b) last[b] = new_tokens[b] - 1;
    TRY_ASSIGN(Tensor positions, logit_positions_tensor(last));
    inputs.push_back(std::move(positions));
  }
  Expected<std::vector<Tensor>> outputs = std::vector<Tensor>{};
  if (shared_) {  // the pasts are bound as the presents: the decoder writes the new positions in place
    std::vector<Tensor> bound(io.fetches.size());
    std::copy(past.begin(), past.end(), bound.begin() + 1);
    auto result = model_->session().run_bound(io.feeds, inputs, io.fetches, bound);
    if (!result) return result.status().with_context("genai: decoder run: ");
    outputs = std::move(result->outputs);
  } else {
    outputs = model_->session().run(io.feeds, inputs, io.fetches);
    if (!outputs) return outputs.status().with_context("genai: decoder run: ");
  }
  TRY(check_logits((*outputs)[0], batch, model_->config().vocab_size));
  for (size_t i = 1; i < outputs->size() && !shared_; ++i) {
    const Tensor& present = (*outputs)[i];
    const size_t axis = present.rank() - 2;
    if (present.rank() < 4 || present.dtype() != io.cache || present.shape()[axis] != total) {
      return make_error(StatusCode::kInvalidArgument, "genai: ", io.present[i - 1], " ",
                        shape_to_string(present.shape()), " must hold ", total, " positions");
    }
  }
  return outputs;
}

std::vector<float> BatchEngine::last_logits(const Tensor& logits, int64_t row, int64_t position) const {
  std::vector<float> out(static_cast<size_t>(model_->config().vocab_size));
  // A decoder that returns one position per row (Model::Io::logit_positions) returned the one asked for.
  const int64_t at = model_->io().logit_positions || position < 0 ? logits.shape()[1] - 1 : position;
  position_logits(logits, row, at, model_->config().vocab_size, out.data());
  return out;
}

void BatchEngine::copy_cache_positions(const Tensor& source, int64_t source_row, int64_t from, const Tensor& target,
                                       int64_t target_row, int64_t to, int64_t length) const {
  const Shape& shape = target.shape();
  const size_t batch_axis = shape.size() - 4;
  const int64_t lead = batch_axis == 0 ? 1 : shape[0], heads = shape[batch_axis + 1];
  const int64_t target_batch = shape[batch_axis], target_width = shape[batch_axis + 2];
  const int64_t source_batch = source.shape()[batch_axis], source_width = source.shape()[batch_axis + 2];
  const size_t position_bytes = data_type_storage_bytes(target.dtype(), shape.back());
  for (int64_t l = 0; l < lead; ++l) {
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t src = ((l * source_batch + source_row) * heads + h) * source_width + from;
      const int64_t dst = ((l * target_batch + target_row) * heads + h) * target_width + to;
      std::memcpy(static_cast<char*>(target.raw_data()) + static_cast<size_t>(dst) * position_bytes,
                  static_cast<const char*>(source.raw_data()) + static_cast<size_t>(src) * position_bytes,
                  static_cast<size_t>(length) * position_bytes);
    }
  }
}

Status BatchEngine::relayout(const std::vector<RowSource>& rows, const std::vector<Tensor>& fresh) {
  int64_t width = 0;
  for (const RowSource& r : rows) width = std::max(width, r.length);
  const int64_t batch = static_cast<int64_t>(rows.size());
  std::vector<Tensor> next;
  for (size_t i = 0; i < model_->io().past.size(); ++i) {
    TRY_ASSIGN(Tensor target, empty_cache(batch, width));
    for (int64_t b = 0; b < batch; ++b) {
      const RowSource& r = rows[static_cast<size_t>(b)];
      if (r.length == 0) continue;
      const Tensor& source = r.fresh ? fresh[i] : past_[i];
      const int64_t source_width = source.shape()[source.rank() - 2];
      copy_cache_positions(source, r.row, rows_start_at_zero_ ? 0 : source_width - r.length, target, b,
                           rows_start_at_zero_ ? 0 : width - r.length, r.length);
    }
    next.push_back(std::move(target));
  }
  past_ = std::move(next);
  width_ = width;
  return Status::ok();
}

void BatchEngine::keep_finished_prefix() {
  for (const Row& row : rows_) {
    if (row.finished && row.prefix_kept) return;  // this step's leaving rows gave theirs already
  }
  for (size_t b = 0; b < rows_.size(); ++b) {
    Row& leaving = rows_[b];
    if (!leaving.finished || !leaving.cache_consistent || leaving.cached < kReusedPrefixMin) continue;
    std::vector<Tensor> kept;
    for (const Tensor& source : past_) {
      Expected<Tensor> target = empty_cache(1, leaving.cached);
      if (!target) return;  // no memory for it: the old prefix stays
      copy_cache_positions(source, static_cast<int64_t>(b), rows_start_at_zero_ ? 0 : width_ - leaving.cached,
                           *target, 0, 0, leaving.cached);
      kept.push_back(std::move(*target));
    }
    prefix_cache_ = std::move(kept);
    prefix_.assign(leaving.tokens.begin(), leaving.tokens.begin() + leaving.cached);
    leaving.prefix_kept = true;
    return;
  }
}

Status BatchEngine::check_new(const NewSequence& s, int64_t free) const {
  const GenaiConfig& c = model_->config();
  if (s.prompt.empty()) return make_error(StatusCode::kInvalidArgument, "genai: the prompt has no tokens");
  if (s.copies < 1 || s.copies > free) {
    return make_error(StatusCode::kInvalidArgument, "genai: ", s.copies, " sequences asked, ", free, " free of ",
                      max_batch_);
  }
  if (static_cast<int64_t>(s.prompt.size()) >= c.context_length) {
    return make_error(StatusCode::kInvalidArgument, "genai: the prompt has ", s.prompt.size(),
                      " tokens; the context holds ", c.context_length, " with the generated ones");
  }
  for (const int32_t t : s.prompt) {
    if (t < 0 || t >= c.vocab_size) {
      return make_error(StatusCode::kInvalidArgument, "genai: token ", t, " is outside the vocabulary [0, ",
                        c.vocab_size, ")");
    }
  }
  if (s.options.max_new_tokens < 1) {
    return make_error(StatusCode::kInvalidArgument, "genai: max_new_tokens must be >= 1");
  }
  return Status::ok();
}

Expected<std::vector<int64_t>> BatchEngine::add(const std::vector<int32_t>& prompt, int64_t copies,
                                                const SequenceOptions& options) {
  std::vector<Expected<Added>> added = add_all({NewSequence{prompt, copies, options}});
  if (!added[0]) return added[0].status();
  return std::move(added[0]->ids);
}

std::vector<Expected<BatchEngine::Added>> BatchEngine::add_all(const std::vector<NewSequence>& sequences) {
  std::vector<Expected<Added>> results;
  results.reserve(sequences.size());
  // First, so that the kept prefix the prompts are matched against is the final one.
  if (shared_) {
    compact();
  } else {
    keep_finished_prefix();
  }
  int64_t free = free_slots();
  std::vector<size_t> together;
  for (size_t i = 0; i < sequences.size(); ++i) {
    const NewSequence& s = sequences[i];
    if (Status valid = check_new(s, free); !valid.is_ok()) {
      results.push_back(std::move(valid));
      continue;
    }
    if (shared_ && reusable_prefix(s.prompt) == 0) {
      together.push_back(i);
      results.push_back(Added{});
      free -= s.copies;
      continue;
    }
    results.push_back(add_alone(s));
    if (results.back()) free -= s.copies;
  }
  if (!together.empty()) add_together(sequences, together, results);
  return results;
}

int64_t BatchEngine::reusable_prefix(const std::vector<int32_t>& prompt) const {
  const auto common = static_cast<int64_t>(
      std::mismatch(prompt.begin(), prompt.end(), prefix_.begin(), prefix_.end()).first - prompt.begin());
  const int64_t reused = std::min(common, static_cast<int64_t>(prompt.size()) - 1);
  return reused < kReusedPrefixMin ? 0 : reused;
}

Expected<BatchEngine::Added> BatchEngine::add_alone(const NewSequence& s) {
  const int64_t length = static_cast<int64_t>(s.prompt.size());
  const int64_t reused = reusable_prefix(s.prompt);
  std::vector<float> logits;
  if (shared_) {  // prefilled straight into the next free row, then copied into the rows of the other copies
    TRY(reserve(length));
    const int64_t row = static_cast<int64_t>(rows_.size());
    TRY_ASSIGN(logits, prefill_from_prefix(s.prompt, reused, row));
    for (int64_t k = 1; k < s.copies; ++k) copy_row(row, row + k, length);
  } else {
    TRY_ASSIGN(logits, prefill_alone(s.prompt, s.copies, reused));
  }
  ++prefill_runs_;
  return Added{join(s.prompt, s.copies, s.options, std::move(logits)), reused};
}

void BatchEngine::add_together(const std::vector<NewSequence>& sequences, const std::vector<size_t>& which,
                               std::vector<Expected<Added>>& results) {
  const auto fail = [&](const Status& status) {
    for (const size_t i : which) results[i] = status;
  };
  std::vector<std::vector<int32_t>> ids;
  std::vector<int64_t> new_tokens;
  int64_t steps = 0;
  for (const size_t i : which) steps = std::max(steps, static_cast<int64_t>(sequences[i].prompt.size()));
  for (const size_t i : which) {
    std::vector<int32_t> padded = sequences[i].prompt;
    new_tokens.push_back(static_cast<int64_t>(padded.size()));
    padded.resize(static_cast<size_t>(steps), padded.back());  // past the row's mask: never attended to
    ids.push_back(std::move(padded));
  }
  if (Status reserved = reserve(steps); !reserved.is_ok()) return fail(reserved);
  const int64_t first = static_cast<int64_t>(rows_.size()), count = static_cast<int64_t>(which.size());
  auto outputs = run_decoder(ids, std::vector<int64_t>(which.size(), 0), buffer_rows(first, count), 0, new_tokens);
  if (!outputs) return fail(outputs.status());
  ++prefill_runs_;
  // The prefilled rows first (first + b), then the other copies of each, each from its prompt's row.
  std::vector<uint64_t> seeds;
  for (size_t b = 0; b < which.size(); ++b) {
    const NewSequence& s = sequences[which[b]];
    seeds.push_back(s.options.search.random_seed ? *s.options.search.random_seed : std::random_device{}());
    const int64_t row = static_cast<int64_t>(b);
    results[which[b]]->ids.push_back(
        join_row(s.prompt, s.options, last_logits((*outputs)[0], row, new_tokens[b] - 1), seeds.back()));
  }
  for (size_t b = 0; b < which.size(); ++b) {
    const NewSequence& s = sequences[which[b]];
    for (int64_t k = 1; k < s.copies; ++k) {
      copy_row(first + static_cast<int64_t>(b), static_cast<int64_t>(rows_.size()), new_tokens[b]);
      std::vector<float> logits = rows_[static_cast<size_t>(first) + b].logits;
      const uint64_t seed = seeds[b] + static_cast<uint64_t>(k);
      results[which[b]]->ids.push_back(join_row(s.prompt, s.options, std::move(logits), seed));
    }
  }
}

Expected<std::vector<float>> BatchEngine::prefill_from_prefix(const std::vector<int32_t>& prompt, int64_t reused,
                                                              int64_t row) {
  copy_row(max_batch_, row, reused);
  const std::vector<int32_t> rest(prompt.begin() + reused, prompt.end());
  TRY_ASSIGN(std::vector<Tensor> outputs, run_decoder({rest}, {reused}, buffer_rows(row, 1), reused));
  return last_logits(outputs[0], 0);
}

Expected<std::vector<float>> BatchEngine::prefill_alone(const std::vector<int32_t>& prompt, int64_t copies,
                                                        int64_t reused) {
  std::vector<Tensor> past;  // the first `reused` positions of the kept prefix (none: empty caches)
  for (size_t i = 0; i < model_->io().past.size(); ++i) {
    TRY_ASSIGN(Tensor t, empty_cache(1, reused));
    if (reused > 0) copy_cache_positions(prefix_cache_[i], 0, 0, t, 0, 0, reused);
    past.push_back(std::move(t));
  }
  const std::vector<int32_t> rest(prompt.begin() + reused, prompt.end());
  TRY_ASSIGN(std::vector<Tensor> outputs, run_decoder({rest}, {reused}, past, reused));
  std::vector<float> logits = last_logits(outputs[0], 0);
  keep_finished_prefix();
  std::vector<RowSource> layout = kept_rows();
  std::erase_if(rows_, [](const Row& row) { return row.finished; });
  for (int64_t k = 0; k < copies; ++k) layout.push_back({true, 0, static_cast<int64_t>(prompt.size())});
  outputs.erase(outputs.begin());
  TRY(relayout(layout, outputs));
  return logits;
}

std::vector<int64_t> BatchEngine::join(const std::vector<int32_t>& prompt, int64_t copies,
                                       const SequenceOptions& options, std::vector<float> logits) {
  std::vector<int64_t> ids;
  const uint64_t seed = options.search.random_seed ? *options.search.random_seed : std::random_device{}();
  for (int64_t k = 0; k < copies; ++k) {
    ids.push_back(join_row(prompt, options, logits, seed + static_cast<uint64_t>(k)));
  }
  return ids;
}

int64_t BatchEngine::join_row(const std::vector<int32_t>& prompt, const SequenceOptions& options,
                              std::vector<float> logits, uint64_t seed) {
  Row row;
  row.id = next_id_++;
  row.options = options;
  row.random.seed(seed);
  row.tokens = prompt;
  row.prompt_length = prompt.size();
  row.cached = static_cast<int64_t>(prompt.size());
  row.logits = std::move(logits);
  rows_.push_back(std::move(row));
  return rows_.back().id;
}

Expected<std::vector<BatchEngine::Pick>> BatchEngine::pick() {
  const GenaiConfig& c = model_->config();
  const auto& eos = c.eos_token_ids;
  std::vector<Pick> picks;
  for (Row& row : rows_) {
    if (row.finished || row.logits.empty()) continue;
    std::vector<float> scores = row.logits;
    apply_penalties(scores, row.tokens, row.prompt_length, row.options.search, eos);
    for (const auto& [token, bias] : row.options.logit_bias) {
      if (token >= 0 && token < c.vocab_size) scores[static_cast<size_t>(token)] += bias;
    }
    Pick p;
    p.id = row.id;
    p.token = pick_token(scores, row.options.search, row.random);
    if (row.options.top_logprobs >= 0) p.logprobs = token_logprobs(row.logits, p.token, row.options.top_logprobs);
    row.tokens.push_back(p.token);
    row.logits.clear();
    const int64_t generated = static_cast<int64_t>(row.tokens.size() - row.prompt_length);
    if (std::find(eos.begin(), eos.end(), p.token) != eos.end()) {
      p.finish = Finish::kEndOfSequence;
    } else if (generated >= row.options.max_new_tokens || static_cast<int64_t>(row.tokens.size()) >= c.context_length) {
      p.finish = Finish::kLength;
    }
    row.finished = p.finish != Finish::kNone;
    picks.push_back(std::move(p));
  }
  return picks;
}

void BatchEngine::remove(int64_t id) {
  for (Row& row : rows_) {
    if (row.id == id) row.finished = true;
  }
}

Status BatchEngine::advance() {
  // Drop the finished rows (and the cache positions nobody needs any more), then step the others.
  if (shared_) {
    compact();
  } else if (std::any_of(rows_.begin(), rows_.end(), [](const Row& row) { return row.finished; })) {
    keep_finished_prefix();
    TRY(relayout(kept_rows(), {}));
    std::erase_if(rows_, [](const Row& row) { return row.finished; });
  }
  std::vector<std::vector<int32_t>> ids;
  std::vector<int64_t> lengths;
  for (const Row& row : rows_) {
    if (!row.logits.empty()) {
      return make_error(StatusCode::kInvalidArgument, "genai: advance() needs a pick() of every sequence first");
    }
    ids.push_back({row.tokens.back()});
    lengths.push_back(row.cached);
  }
  if (rows_.empty()) {
    if (!shared_) past_.clear();
    width_ = 0;
    return Status::ok();
  }
  if (shared_) {
    width_ = *std::max_element(lengths.begin(), lengths.end());
    TRY(reserve(width_ + 1));
  }
  auto outputs = run_decoder(ids, lengths, shared_ ? buffer_rows(0, static_cast<int64_t>(rows_.size())) : past_, width_);
  if (!outputs) {
    for (Row& row : rows_) {  // the cache is no longer consistent with the rows
      row.finished = true;
      row.cache_consistent = false;
    }
    return outputs.status();
  }
  for (size_t b = 0; b < rows_.size(); ++b) {
    rows_[b].logits = last_logits((*outputs)[0], static_cast<int64_t>(b));
    ++rows_[b].cached;
  }
  if (!shared_) past_.assign(std::make_move_iterator(outputs->begin() + 1), std::make_move_iterator(outputs->end()));
  width_ += 1;
  return Status::ok();
}

Status BatchEngine::reserve(int64_t positions) {
  if (positions <= capacity_) return Status::ok();
  const GenaiConfig& c = model_->config();
  const int64_t capacity = std::min(std::max({positions, 2 * capacity_, int64_t{64}}), std::max(c.context_length, positions));
  std::vector<Tensor> grown;
  for (size_t i = 0; i < model_->io().past.size(); ++i) {
    // max_batch rows for the running sequences, then the prefix row.
    TRY_ASSIGN(Tensor t, Tensor::allocate(model_->io().cache, Shape{max_batch_ + 1, c.num_key_value_heads, capacity,
                                                                     c.head_size}));
    std::memset(t.raw_data(), 0, t.storage_bytes());
    grown.push_back(std::move(t));
  }
  std::vector<Tensor> old = std::move(past_);
  const int64_t old_capacity = capacity_;
  past_ = std::move(grown);
  capacity_ = capacity;
  for (size_t i = 0; i < old.size(); ++i) {
    for (size_t r = 0; r < rows_.size(); ++r) {
      copy_positions(old[i], old_capacity, static_cast<int64_t>(r), past_[i], static_cast<int64_t>(r), rows_[r].cached);
    }
    copy_positions(old[i], old_capacity, max_batch_, past_[i], max_batch_, static_cast<int64_t>(prefix_.size()));
  }
  return Status::ok();
}

std::vector<Tensor> BatchEngine::buffer_rows(int64_t first, int64_t batch) const {
  const GenaiConfig& c = model_->config();
  std::vector<Tensor> views;
  for (const Tensor& buffer : past_) {
    const size_t row_bytes = data_type_storage_bytes(buffer.dtype(), c.num_key_value_heads * capacity_ * c.head_size);
    views.push_back(Tensor::in_buffer(buffer.buffer(), static_cast<size_t>(first) * row_bytes, buffer.dtype(),
                                      Shape{batch, c.num_key_value_heads, capacity_, c.head_size}));
  }
  return views;
}

void BatchEngine::copy_positions(const Tensor& from, int64_t from_capacity, int64_t from_row, const Tensor& to,
                                 int64_t to_row, int64_t length) const {
  const GenaiConfig& c = model_->config();
  const size_t position_bytes = data_type_storage_bytes(from.dtype(), c.head_size);
  for (int64_t h = 0; h < c.num_key_value_heads; ++h) {
    std::memmove(static_cast<char*>(to.raw_data()) +
                     static_cast<size_t>((to_row * c.num_key_value_heads + h) * capacity_) * position_bytes,
                 static_cast<const char*>(from.raw_data()) +
                     static_cast<size_t>((from_row * c.num_key_value_heads + h) * from_capacity) * position_bytes,
                 static_cast<size_t>(length) * position_bytes);
  }
}

void BatchEngine::copy_row(int64_t from, int64_t to, int64_t length) {
  for (const Tensor& buffer : past_) copy_positions(buffer, capacity_, from, buffer, to, length);
}

void BatchEngine::compact() {
  bool kept = false;  // one prefix per compaction: a second copy would only overwrite the first
  size_t b = 0;
  while (b < rows_.size()) {
    if (!rows_[b].finished) {
      ++b;
      continue;
    }
    const Row& leaving = rows_[b];
    if (!kept && leaving.cache_consistent && leaving.cached >= kReusedPrefixMin) {
      copy_row(static_cast<int64_t>(b), max_batch_, leaving.cached);
      prefix_.assign(leaving.tokens.begin(), leaving.tokens.begin() + leaving.cached);
      kept = true;
    }
    const size_t last = rows_.size() - 1;
    if (b != last) {
      copy_row(static_cast<int64_t>(last), static_cast<int64_t>(b), rows_[last].cached);
      rows_[b] = std::move(rows_[last]);
    }
    rows_.pop_back();
  }
}

int64_t BatchEngine::active() const {
  return std::count_if(rows_.begin(), rows_.end(), [](const Row& row) { return !row.finished; });
}

std::vector<BatchEngine::RowSource> BatchEngine::kept_rows() const {
  std::vector<RowSource> layout;
  for (size_t b = 0; b < rows_.size(); ++b) {
    if (!rows_[b].finished) layout.push_back({false, static_cast<int64_t>(b), rows_[b].cached});
  }
  return layout;
}

std::vector<int32_t> BatchEngine::tokens(int64_t id) const {
  for (const Row& row : rows_) {
    if (row.id == id) return row.tokens;
  }
  return {};
}

}  // namespace nxrt::genai
