// Continuous batching over one genai Model: sequences join and leave between decoder steps, and each step runs the
// decoder once for every active sequence (one new token each), so concurrent requests share decoder runs.
//
// Use from one thread: add() prefills a prompt alone (batch 1) and joins `copies` sequences that continue it;
// pick() chooses one token per active sequence from its current logits; the caller may remove() sequences (stop
// strings, cancelled clients); advance() drops the finished ones and runs the decoder on the others' picked tokens,
// which gives every active sequence current logits again. Sequences finish on an end-of-sequence id, after
// max_new_tokens, or when they fill the context.
//
// The cache layout follows the decoder's attention. With GroupQueryAttention over split key / value caches
// (seqlens_k from the attention mask) each past input is one buffer of max_batch rows (and the prefix row below)
// and a capacity of positions, bound as both past and present: the running sequences are its first rows, each from
// position 0, the decoder writes each step's key / value rows in place (no cache copy per step), a prompt is
// prefilled straight into its row, a leaving sequence's row is refilled by the last row's positions, and the
// capacity doubles (one copy) when a sequence outgrows it. With any other attention (a mask over positions, or a
// combined cache) the cache is one batch tensor per past input as wide as the longest sequence, rows right-aligned
// and left-padded under a zero mask; joins and leaves copy it into the new layout once, and each step's presents
// become the next pasts. Decoders without an attention mask take one sequence at a time.
//
// Prompt prefixes: the engine keeps the cache of the sequence that left last (prompt and generated tokens,
// kReusedPrefixMin positions or more; of several leaving at one step, one of them), in one row past max_batch of the
// shared buffers, or (other layouts) as one-row caches of its positions. A prompt that starts with at least
// kReusedPrefixMin of those tokens takes their cache and prefills only the rest (at least its last token, for the
// logits): a conversation's next turn, or requests that share a system prompt, skip the positions already computed.
//
// Log-probabilities are those of the decoder's raw logits (before penalties, logit bias and temperature).
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "genai/generator.h"
#include "genai/sampling.h"

namespace nxrt::genai {

class BatchEngine {
 public:
  struct SequenceOptions {
    SearchOptions search;          // do_sample, temperature, top_k, top_p, min_p, penalties, random_seed
    int64_t max_new_tokens = 16;   // at least 1
    std::vector<std::pair<int32_t, float>> logit_bias;  // added to the token's logit before the choice
    int64_t top_logprobs = -1;     // < 0: no log-probabilities; else the chosen token's and this many best
  };
  enum class Finish { kNone, kEndOfSequence, kLength };
  struct Pick {
    int64_t id = 0;
    int32_t token = 0;
    Finish finish = Finish::kNone;
    TokenLogprobs logprobs;  // filled when the sequence asked for them
  };

  // `max_batch`: the most sequences decoded together (at least 1).
  static Expected<std::unique_ptr<BatchEngine>> create(std::shared_ptr<const Model> model, int64_t max_batch);

  // Prefills `prompt` and joins `copies` sequences continuing it, returning their ids (copy i samples with
  // random_seed + i). INVALID_ARGUMENT for an empty prompt, a token outside the vocabulary, a prompt that leaves no
  // room in the context, or copies past the free slots (free_slots()).
  Expected<std::vector<int64_t>> add(const std::vector<int32_t>& prompt, int64_t copies, const SequenceOptions& options);
  struct NewSequence {
    std::vector<int32_t> prompt;
    int64_t copies = 1;
    SequenceOptions options;
  };
  struct Added {
    std::vector<int64_t> ids;    // as add() returns them
    int64_t reused_tokens = 0;   // prompt positions taken from the kept prefix
  };
  // add() for several prompts at once, in order (each takes slots from those left by the ones before it; one
  // refused takes none). With shared buffers the prompts that reuse no kept prefix are prefilled together, in one
  // decoder run over their rows (right-padded to the longest; each row's logits are those of its last token).
  std::vector<Expected<Added>> add_all(const std::vector<NewSequence>& sequences);
  // One token per active sequence (in batch-row order, which leaves may change); finished sequences take no more
  // picks.
  Expected<std::vector<Pick>> pick();
  // Ends a sequence now (unknown ids are ignored); its slot is free at once (its cache rows go at the next add()
  // or advance()).
  void remove(int64_t id);
  // Runs the decoder for the sequences that picked a token and did not finish.
  Status advance();

  // Sequences not finished or removed.
  int64_t active() const;
  int64_t free_slots() const { return max_batch_ - active(); }
  int64_t max_batch() const { return max_batch_; }
  const Model& model() const { return *model_; }
  // Decoder runs that prefilled prompts, over the engine's life (prompts prefilled together count once).
  int64_t prefill_runs() const { return prefill_runs_; }
  static constexpr int64_t kReusedPrefixMin = 16;
  // The tokens of a sequence (prompt and picked); empty for an unknown id.
  std::vector<int32_t> tokens(int64_t id) const;

 private:
  struct Row {
    int64_t id = 0;
    SequenceOptions options;
    std::mt19937_64 random;
    std::vector<int32_t> tokens;
    size_t prompt_length = 0;
    int64_t cached = 0;          // positions of this row in the cache
    std::vector<float> logits;   // of its next position; empty once picked from
    bool finished = false;
    bool cache_consistent = true;  // false after a failed decoder run: its cache rows are not kept as a prefix
    bool prefix_kept = false;      // finished, and its cache is the kept prefix (layouts other than shared buffers)
  };
  // Where a row of the new cache layout comes from: the current cache or a prefill's presents.
  struct RowSource {
    bool fresh = false;
    int64_t row = 0;
    int64_t length = 0;
  };

  BatchEngine(std::shared_ptr<const Model> model, int64_t max_batch);
  // Runs the decoder on `ids` ([batch, steps]) over `past` rows of `lengths`: row b holds new_tokens[b] new tokens
  // (every row `steps` when new_tokens is empty), the rest of its ids are padding outside its attention mask.
  Expected<std::vector<Tensor>> run_decoder(const std::vector<std::vector<int32_t>>& ids,
                                            const std::vector<int64_t>& lengths, const std::vector<Tensor>& past,
                                            int64_t width, const std::vector<int64_t>& new_tokens = {});
  Status relayout(const std::vector<RowSource>& rows, const std::vector<Tensor>& fresh);
  // Copies `length` positions of batch row `source_row` from position `from` of cache tensor `source` to row
  // `target_row` at position `to` of `target` (same layout, any batch and width), for every head (and key / value).
  void copy_cache_positions(const Tensor& source, int64_t source_row, int64_t from, const Tensor& target,
                            int64_t target_row, int64_t to, int64_t length) const;
  // Layouts other than the shared buffers: keeps the cache of a finished row (if any qualifies and none of the
  // finished rows gave its cache yet) as the prefix, before the finished rows leave past_. Without memory for the
  // copy the previous prefix stays.
  void keep_finished_prefix();
  // Shared buffers (GroupQueryAttention): capacity for `positions`, views of the first `batch` rows from row
  // `first`, and the removal of finished rows by moving the last rows into their place.
  Status reserve(int64_t positions);
  std::vector<Tensor> buffer_rows(int64_t first, int64_t batch) const;
  // The first `length` positions of row `from_row` of buffer `from` (of `from_capacity` positions per row) into
  // row `to_row` of `to` (of capacity_); copy_row does it within every buffer.
  void copy_positions(const Tensor& from, int64_t from_capacity, int64_t from_row, const Tensor& to, int64_t to_row,
                      int64_t length) const;
  void copy_row(int64_t from, int64_t to, int64_t length);
  // Drops the finished rows (moving the last rows into their place), keeping the cache of one as the prefix row.
  void compact();
  // Prefills `prompt` into row `row` of the shared buffers from its first `reused` positions in the kept prefix
  // (reusable_prefix); its logits.
  Expected<std::vector<float>> prefill_from_prefix(const std::vector<int32_t>& prompt, int64_t reused, int64_t row);
  // add()'s two halves: the prefill of the mask layout (cache re-laid with the new rows) after the first `reused`
  // positions of the kept prefix, and the new rows' state.
  Expected<std::vector<float>> prefill_alone(const std::vector<int32_t>& prompt, int64_t copies, int64_t reused);
  std::vector<int64_t> join(const std::vector<int32_t>& prompt, int64_t copies, const SequenceOptions& options,
                            std::vector<float> logits);
  // One new row (the next buffer row with shared buffers) continuing `prompt`, sampling with `seed`; its id.
  int64_t join_row(const std::vector<int32_t>& prompt, const SequenceOptions& options, std::vector<float> logits,
                   uint64_t seed);
  // Why `s` cannot join with `free` slots left, or OK.
  Status check_new(const NewSequence& s, int64_t free) const;
  // One prompt prefilled on its own: the mask layout, or (shared buffers) a prompt that reuses the kept prefix.
  Expected<Added> add_alone(const NewSequence& s);
  // The prompts sequences[which[...]] prefilled together into the next free rows (shared buffers, no prefix).
  void add_together(const std::vector<NewSequence>& sequences, const std::vector<size_t>& which,
                    std::vector<Expected<Added>>& results);
  // Prompt positions a prompt would take from the kept prefix (0 below kReusedPrefixMin).
  int64_t reusable_prefix(const std::vector<int32_t>& prompt) const;
  // The rows that did not finish, and where each comes from in the current cache.
  std::vector<RowSource> kept_rows() const;
  Expected<Tensor> empty_cache(int64_t batch, int64_t width) const;
  // The logits of row `row` at `position` (< 0: its last position); a decoder with Io::logit_positions returned
  // only the position its run asked for.
  std::vector<float> last_logits(const Tensor& logits, int64_t row, int64_t position = -1) const;

  std::shared_ptr<const Model> model_;
  int64_t max_batch_ = 1;
  bool rows_start_at_zero_ = false;  // GroupQueryAttention layout
  bool shared_ = false;              // ... with split caches: buffers bound as past and present
  int64_t capacity_ = 0;             // positions per row of the shared buffers
  int64_t next_id_ = 0;
  std::vector<Row> rows_;
  // One per Model::io().past: [.., batch, Nk, width, H], or [max_batch + 1, Nk, capacity, H] (shared buffers).
  std::vector<Tensor> past_;
  int64_t width_ = 0;
  std::vector<int32_t> prefix_;  // the tokens whose cache the prefix row (index max_batch_) or prefix_cache_ holds
  std::vector<Tensor> prefix_cache_;  // other layouts: one per past input, [.., 1, Nk, prefix_.size(), H]
  int64_t prefill_runs_ = 0;
};

}  // namespace nxrt::genai
