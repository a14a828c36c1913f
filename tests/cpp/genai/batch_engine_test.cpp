// BatchEngine (genai/batch_engine.h) on ONNX Runtime GenAI's GPT-2 test folder: sequences that join and leave a
// running batch produce the greedy tokens the Generator gives each of them alone; limits and removal; prompts that
// reuse a kept prefix.
#include "genai/batch_engine.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace nxrt::genai {
namespace {

std::shared_ptr<const Model> fixture_model() {
  const std::string here = __FILE__;
  const std::string folder = here.substr(0, here.rfind("/tests/cpp/")) + "/../shared/genai/tiny-random-gpt2-fp32";
  auto model = Model::load(folder, 1);
  if (!model) return nullptr;
  return *model;
}

// The greedy continuation of `prompt` by the Generator alone: `count` tokens (fewer at an end-of-sequence id).
std::vector<int32_t> alone(const std::shared_ptr<const Model>& model, const std::vector<int32_t>& prompt, int64_t count) {
  SearchOptions search = model->config().search;
  search.do_sample = false;
  search.max_length = static_cast<int64_t>(prompt.size()) + count;
  auto generator = Generator::create(model, search);
  EXPECT_TRUE(generator.has_value()) << generator.status().to_string();
  EXPECT_TRUE((*generator)->append_tokens({prompt}).is_ok());
  std::vector<int32_t> out;
  const auto& eos = model->config().eos_token_ids;
  while (!(*generator)->is_done()) {
    EXPECT_TRUE((*generator)->generate_next_token().is_ok());
    out.push_back((*generator)->next_tokens()[0]);
    if (std::find(eos.begin(), eos.end(), out.back()) != eos.end()) break;
  }
  return out;
}

BatchEngine::SequenceOptions greedy(int64_t max_new_tokens) {
  BatchEngine::SequenceOptions options;
  options.search.do_sample = false;
  options.max_new_tokens = max_new_tokens;
  return options;
}

TEST(BatchEngine, JoiningAndLeavingSequencesMatchTheGeneratorAlone) {
  const auto model = fixture_model();
  if (model == nullptr) GTEST_SKIP() << "no shared genai fixture";
  auto engine = BatchEngine::create(model, 4);
  ASSERT_TRUE(engine.has_value()) << engine.status().to_string();
  // Prompts of different lengths join at steps 0, 0, 3 and 7 with different budgets; one leaves early.
  const std::vector<std::vector<int32_t>> prompts = {{5, 77, 300}, {12, 499, 1, 42, 7, 9, 600}, {3}, {800, 801, 2, 4}};
  const std::vector<int64_t> join_at = {0, 0, 3, 7}, budget = {20, 6, 15, 12};
  std::map<int64_t, size_t> which;
  std::map<size_t, std::vector<int32_t>> produced;
  for (int step = 0; step < 40; ++step) {
    for (size_t p = 0; p < prompts.size(); ++p) {
      if (join_at[p] != step) continue;
      auto ids = (*engine)->add(prompts[p], 1, greedy(budget[p]));
      ASSERT_TRUE(ids.has_value()) << ids.status().to_string();
      which[(*ids)[0]] = p;
    }
    if ((*engine)->active() == 0) break;
    auto picks = (*engine)->pick();
    ASSERT_TRUE(picks.has_value()) << picks.status().to_string();
    for (const auto& pick : *picks) produced[which[pick.id]].push_back(pick.token);
    ASSERT_TRUE((*engine)->advance().is_ok());
  }
  for (size_t p = 0; p < prompts.size(); ++p) {
    EXPECT_EQ(produced[p], alone(model, prompts[p], budget[p])) << "prompt " << p;
  }
  EXPECT_EQ((*engine)->active(), 0);
}

TEST(BatchEngine, CopiesShareOnePrefillAndRemovedSequencesFreeTheirSlot) {
  const auto model = fixture_model();
  if (model == nullptr) GTEST_SKIP() << "no shared genai fixture";
  auto engine = BatchEngine::create(model, 3);
  ASSERT_TRUE(engine.has_value());
  auto ids = (*engine)->add({10, 20, 30}, 3, greedy(8));
  ASSERT_TRUE(ids.has_value()) << ids.status().to_string();
  EXPECT_EQ((*engine)->free_slots(), 0);
  auto full = (*engine)->add({1}, 1, greedy(8));
  ASSERT_FALSE(full.has_value());
  EXPECT_EQ(full.status().code(), StatusCode::kInvalidArgument);
  auto picks = (*engine)->pick();
  ASSERT_TRUE(picks.has_value());
  ASSERT_EQ(picks->size(), 3u);
  EXPECT_EQ((*picks)[0].token, (*picks)[1].token);  // greedy copies agree
  (*engine)->remove((*ids)[1]);
  ASSERT_TRUE((*engine)->advance().is_ok());
  EXPECT_EQ((*engine)->active(), 2);
  EXPECT_EQ((*engine)->free_slots(), 1);
  EXPECT_TRUE((*engine)->tokens((*ids)[1]).empty());
  // The two left continue as the Generator alone does.
  const auto expected = alone(model, {10, 20, 30}, 8);
  std::vector<int32_t> first = {(*picks)[0].token}, last = {(*picks)[2].token};
  while ((*engine)->active() > 0) {
    auto next = (*engine)->pick();
    ASSERT_TRUE(next.has_value());
    ASSERT_EQ(next->size(), 2u);
    first.push_back((*next)[0].token);
    last.push_back((*next)[1].token);
    ASSERT_TRUE((*engine)->advance().is_ok());
  }
  EXPECT_EQ(first, expected);
  EXPECT_EQ(last, expected);
}

// Picks and advances until no sequence is active; the tokens each id picked.
std::map<int64_t, std::vector<int32_t>> run_to_end(BatchEngine& engine) {
  std::map<int64_t, std::vector<int32_t>> produced;
  while (engine.active() > 0) {
    auto picks = engine.pick();
    EXPECT_TRUE(picks.has_value()) << picks.status().to_string();
    if (!picks) break;
    for (const auto& pick : *picks) produced[pick.id].push_back(pick.token);
    const Status advanced = engine.advance();
    EXPECT_TRUE(advanced.is_ok()) << advanced.to_string();
    if (!advanced.is_ok()) break;
  }
  return produced;
}

// The GPT-2 fixture keeps its cache in the mask layout (one combined past per layer, rows right-aligned): a
// conversation's next turn takes the cache of the sequence that just left, with another sequence running beside it,
// and a prompt sharing only part of the kept tokens takes that part; the tokens are those of the whole prompt alone.
TEST(BatchEngine, PromptsReuseTheKeptPrefixInTheMaskLayout) {
  const auto model = fixture_model();
  if (model == nullptr) GTEST_SKIP() << "no shared genai fixture";
  auto engine = BatchEngine::create(model, 2);
  ASSERT_TRUE(engine.has_value());
  std::vector<int32_t> first;
  for (int i = 0; i < 20; ++i) first.push_back(7 + (i * 37) % 400);
  auto added = (*engine)->add_all({{first, 1, greedy(6)}});
  ASSERT_TRUE(added[0].has_value()) << added[0].status().to_string();
  EXPECT_EQ(added[0]->reused_tokens, 0);
  const std::vector<int32_t> answer = run_to_end(**engine)[added[0]->ids[0]];
  ASSERT_EQ(answer, alone(model, first, 6));

  auto neighbour = (*engine)->add({3, 4, 5}, 1, greedy(10));
  ASSERT_TRUE(neighbour.has_value());
  std::vector<int32_t> neighbour_tokens;
  for (int step = 0; step < 2; ++step) {
    auto picks = (*engine)->pick();
    ASSERT_TRUE(picks.has_value());
    neighbour_tokens.push_back((*picks)[0].token);
    ASSERT_TRUE((*engine)->advance().is_ok());
  }
  std::vector<int32_t> second = first;
  second.insert(second.end(), answer.begin(), answer.end());
  second.insert(second.end(), {11, 12, 13});
  auto next_turn = (*engine)->add_all({{second, 1, greedy(8)}});
  ASSERT_TRUE(next_turn[0].has_value()) << next_turn[0].status().to_string();
  // The last picked token of the first turn never ran through the decoder.
  EXPECT_EQ(next_turn[0]->reused_tokens, static_cast<int64_t>(first.size() + answer.size()) - 1);
  auto produced = run_to_end(**engine);
  EXPECT_EQ(produced[next_turn[0]->ids[0]], alone(model, second, 8));
  std::vector<int32_t>& rest = produced[(*neighbour)[0]];
  neighbour_tokens.insert(neighbour_tokens.end(), rest.begin(), rest.end());
  EXPECT_EQ(neighbour_tokens, alone(model, {3, 4, 5}, 10));

  // The kept prefix is now the second turn's (the neighbour left with fewer than kReusedPrefixMin positions).
  std::vector<int32_t> branch(second.begin(), second.begin() + 18);
  branch.insert(branch.end(), {900, 901});
  auto branched = (*engine)->add_all({{branch, 1, greedy(5)}});
  ASSERT_TRUE(branched[0].has_value());
  EXPECT_EQ(branched[0]->reused_tokens, 18);
  EXPECT_EQ(run_to_end(**engine)[branched[0]->ids[0]], alone(model, branch, 5));
  auto unrelated = (*engine)->add_all({{{400, 401, 402}, 1, greedy(3)}});
  ASSERT_TRUE(unrelated[0].has_value());
  EXPECT_EQ(unrelated[0]->reused_tokens, 0);
  EXPECT_EQ(run_to_end(**engine)[unrelated[0]->ids[0]], alone(model, {400, 401, 402}, 3));
}

TEST(BatchEngine, RejectsBadPromptsAndAsksForLogprobs) {
  const auto model = fixture_model();
  if (model == nullptr) GTEST_SKIP() << "no shared genai fixture";
  auto engine = BatchEngine::create(model, 2);
  ASSERT_TRUE(engine.has_value());
  EXPECT_EQ((*engine)->add({}, 1, greedy(4)).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*engine)->add({100000}, 1, greedy(4)).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*engine)->add({1, 2}, 0, greedy(4)).status().code(), StatusCode::kInvalidArgument);
  std::vector<int32_t> long_prompt(static_cast<size_t>(model->config().context_length), 7);
  EXPECT_EQ((*engine)->add(long_prompt, 1, greedy(4)).status().code(), StatusCode::kInvalidArgument);
  auto options = greedy(2);
  options.top_logprobs = 3;
  ASSERT_TRUE((*engine)->add({5, 6}, 1, options).has_value());
  auto picks = (*engine)->pick();
  ASSERT_TRUE(picks.has_value());
  ASSERT_EQ((*picks)[0].logprobs.top.size(), 3u);
  EXPECT_EQ((*picks)[0].logprobs.top[0].first, (*picks)[0].token);  // greedy takes the most likely token
  EXPECT_FLOAT_EQ((*picks)[0].logprobs.top[0].second, (*picks)[0].logprobs.logprob);
  EXPECT_LE((*picks)[0].logprobs.logprob, 0.0f);
  EXPECT_GE((*picks)[0].logprobs.top[0].second, (*picks)[0].logprobs.top[2].second);
}

}  // namespace
}  // namespace nxrt::genai
