// Text generation over an ONNX Runtime GenAI model folder (genai_config.json, the decoder .onnx, tokenizer.json),
// with onnxruntime_genai's flow: a Generator takes prompt tokens (append_tokens runs the prefill), then each
// generate_next_token() runs the decoder on the tokens appended last (when their logits are not computed yet),
// picks one token per sequence from the last logits, and appends it; is_done() holds once every sequence produced
// an end-of-sequence id or reached max_length.
//
// The cache: with search.past_present_share_buffer and a split key / value cache, one buffer per layer of
// max_length positions is bound as both past and present (the decoder writes the new rows in place, nothing is
// copied per step); otherwise the presents of one step are the pasts of the next. Input element types (int32 or
// int64 ids, masks and positions; float32 or float16 caches) follow what the decoder declares.
//
// Search: greedy (the first largest logit), or with do_sample: temperature, top_k, top_p, min_p and a seeded
// generator (random_seed; the same seed gives the same tokens). Before either: repetition_penalty (over the whole
// sequence, as onnxruntime_genai), presence_penalty and frequency_penalty (OpenAI's: over the tokens generated
// since the last append, logit -= presence * [count > 0] + frequency * count), and min_length.
// Beam search (num_beams > 1) keeps num_beams hypotheses per prompt as onnxruntime_genai does: each step takes the
// 2 num_beams best (beam, token) continuations by summed log-probability; an end-of-sequence continuation among the
// first num_beams closes a hypothesis scored sum / length^length_penalty (length without the end token); the others
// become the next beams, whose caches are gathered from their parents. A prompt is done when num_beams hypotheses
// are closed and (early_stopping, or no open beam can still beat the worst of them); at the end the
// num_return_sequences best hypotheses of each prompt (without their end token) are the sequences. Prompts of a batch are left-padded with pad_token_id under a zero attention mask.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "core/data_type.h"
#include "core/status.h"
#include "core/tensor.h"
#include "genai/config.h"
#include "genai/tokenizer.h"

namespace nxrt {
class Session;
}

namespace nxrt::genai {

class Model {
 public:
  // Loads FOLDER: genai_config.json, the decoder (checked against the names the configuration gives), and
  // tokenizer.json when present. `threads` > 0 overrides session_options.intra_op_num_threads.
  static Expected<std::shared_ptr<const Model>> load(const std::string& folder, int threads = 0);
  ~Model();

  const GenaiConfig& config() const { return config_; }
  const Session& session() const { return *session_; }
  // Null when the folder has no tokenizer.json.
  const Tokenizer* tokenizer() const { return tokenizer_.get(); }

  struct Io {
    DataType ids = DataType::kInt64, mask = DataType::kInt64, positions = DataType::kInt64,
             cache = DataType::kFloat32;
    bool has_mask = false, has_positions = false, combined_cache = false;
    // The decoder returns one position per row, chosen by the kLogitPositionsInput feed (see gather_logit_rows).
    bool logit_positions = false;
    std::vector<std::string> past, present;  // per layer: key then value, or one combined name
    // What a decoder run feeds (input_ids, attention_mask and position_ids when present, the pasts, then the logit
    // positions when the decoder takes them) and
    // fetches (logits, then the presents), in that order.
    std::vector<std::string> feeds, fetches;
  };
  const Io& io() const { return io_; }

 private:
  Model() = default;
  GenaiConfig config_;
  std::unique_ptr<Session> session_;
  std::unique_ptr<Tokenizer> tokenizer_;
  Io io_;
};

class Generator {
 public:
  static Expected<std::unique_ptr<Generator>> create(std::shared_ptr<const Model> model, SearchOptions search);

  // Adds prompt tokens: one sequence per entry of `prompts` (all at once, before any generation: later calls append
  // to every sequence and need as many entries), and runs the decoder on them.
  Status append_tokens(const std::vector<std::vector<int32_t>>& prompts);
  Status generate_next_token();
  bool is_done() const;
  // Cuts the (single) sequence back to its first `length` tokens (1 <= length <= its length), keeping the cache
  // of all but the last of them: the next append_tokens or generate_next_token runs the decoder from that token
  // on. Batches of more than one sequence are NOT_IMPLEMENTED.
  Status rewind_to(int64_t length);

  int64_t batch_size() const { return static_cast<int64_t>(sequences_.size()); }
  // The tokens of sequence i (prompt and generated, without padding).
  std::span<const int32_t> sequence(int64_t i) const { return sequences_[static_cast<size_t>(i)]; }
  // The tokens picked by the last generate_next_token().
  std::vector<int32_t> next_tokens() const;
  // The last logits: [batch, vocab] floats of the last position of each sequence.
  const std::vector<float>& logits() const { return logits_; }

 private:
  Generator(std::shared_ptr<const Model> model, SearchOptions search);
  Status run_decoder(const std::vector<std::vector<int32_t>>& tokens);
  Status allocate_cache(int64_t batch);
  // Row b's logits with the penalties and min_length applied.
  std::vector<float> processed_logits(int64_t b) const;
  int32_t pick(int64_t b);
  // Beam search (beam_search.cpp).
  Status beam_step();
  void finalize_beams();
  Status gather_cache(const std::vector<int64_t>& parents);

  std::shared_ptr<const Model> model_;
  SearchOptions search_;
  std::mt19937_64 random_;
  bool shared_buffer_ = false;
  std::vector<std::vector<int32_t>> sequences_;
  std::vector<int64_t> padding_;  // left padding of each sequence in the cache
  std::vector<size_t> generated_from_;  // per sequence: where the tokens generated since the last append start
  std::vector<bool> finished_;
  std::vector<std::vector<int32_t>> pending_;  // appended, not yet run
  std::vector<Tensor> past_;                   // one per name in Model::io().past
  int64_t cache_length_ = 0;                   // positions in the cache (padding included)
  std::vector<float> logits_;
  bool logits_fresh_ = false;

  struct Hypothesis {
    std::vector<int32_t> tokens;
    float score = 0.0f;
  };
  int64_t beams_ = 1;  // rows per prompt
  std::vector<float> beam_scores_;               // per row: summed log-probability
  std::vector<std::vector<Hypothesis>> closed_;  // per prompt, best first
  std::vector<bool> prompt_done_;
  bool beams_final_ = false;  // sequences_ hold the returned sequences
};

}  // namespace nxrt::genai
