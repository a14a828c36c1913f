#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

using Strings = std::vector<std::string>;

TEST(StringNormalizer, CaseInsensitiveStopwordsAndUpper) {
  const auto node = NodeBuilder("StringNormalizer", 10)
                        .attr_string("case_change_action", "UPPER")
                        .attr_strings("stopwords", {"monday"})
                        .node();
  const Tensor y = run_one(node, {make_tensor<std::string>({1, 3}, {"Monday", "tuesday", "x1"})});
  EXPECT_EQ(y.shape(), (Shape{1, 2}));
  EXPECT_EQ(to_vector<std::string>(y), (Strings{"TUESDAY", "X1"}));
  const Tensor empty = run_one(node, {make_tensor<std::string>({1}, {"MONDAY"})});
  EXPECT_EQ(empty.shape(), (Shape{1}));
  EXPECT_EQ(to_vector<std::string>(empty), (Strings{""}));
  auto bad = run_kernel(NodeBuilder("StringNormalizer", 10).attr_string("case_change_action", "TITLE").node(),
                        {make_tensor<std::string>({1}, {"a"})});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(StringConcat, Broadcasts) {
  const Tensor y = run_one(NodeBuilder("StringConcat", 20).node(),
                           {make_tensor<std::string>({2}, {"a", "b"}), make_tensor<std::string>({}, {"!"})});
  EXPECT_EQ(to_vector<std::string>(y), (Strings{"a!", "b!"}));
}

TEST(StringSplit, DelimiterWhitespaceAndMaxsplit) {
  const Tensor x = make_tensor<std::string>({3}, {"a,,b", "", "c"});
  auto out = run_kernel(NodeBuilder("StringSplit", 20).attr_string("delimiter", ",").node(), {x});
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ((*out)[0].shape(), (Shape{3, 3}));
  EXPECT_EQ(to_vector<std::string>((*out)[0]), (Strings{"a", "", "b", "", "", "", "c", "", ""}));
  EXPECT_EQ(to_vector<int64_t>((*out)[1]), (std::vector<int64_t>{3, 1, 1}));

  const Tensor w = make_tensor<std::string>({2}, {"  one two   three ", ""});
  out = run_kernel(NodeBuilder("StringSplit", 20).attr_int("maxsplit", 1).node(), {w});
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(to_vector<std::string>((*out)[0]), (Strings{"one", "two   three ", "", ""}));
  EXPECT_EQ(to_vector<int64_t>((*out)[1]), (std::vector<int64_t>{2, 0}));
}

TEST(RegexFullMatch, MatchesWholeStringAndRejectsBadPattern) {
  const auto node = NodeBuilder("RegexFullMatch", 20).attr_string("pattern", "[a-z]+\\d").node();
  const Tensor y = run_one(node, {make_tensor<std::string>({3}, {"abc1", "abc1x", ""})});
  EXPECT_EQ(to_vector<bool>(y), (std::vector<bool>{true, false, false}));
  auto bad = run_kernel(NodeBuilder("RegexFullMatch", 20).attr_string("pattern", "(").node(),
                        {make_tensor<std::string>({1}, {"a"})});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("RegexFullMatch"), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("pattern '('"), std::string::npos) << bad.status().message();
}

TEST(RegexFullMatch, Re2Syntax) {
  // Named groups and Unicode classes are RE2 syntax; backreferences are not (RE2 has no backtracking).
  const auto named = NodeBuilder("RegexFullMatch", 20).attr_string("pattern", "(?P<word>\\pL+)-\\d+").node();
  EXPECT_EQ(to_vector<bool>(run_one(named, {make_tensor<std::string>({2}, {"\xc3\xa9t\xc3\xa9-42", "ab-"})})),
            (std::vector<bool>{true, false}));
  auto backreference = run_kernel(NodeBuilder("RegexFullMatch", 20).attr_string("pattern", "(a)\\1").node(),
                                  {make_tensor<std::string>({1}, {"aa"})});
  ASSERT_FALSE(backreference.has_value());
  EXPECT_EQ(backreference.status().code(), StatusCode::kInvalidArgument);
}

TEST(RegexFullMatch, LongInputDoesNotRecurse) {
  // std::regex recursed once per character here and overflowed the stack.
  const auto node = NodeBuilder("RegexFullMatch", 20).attr_string("pattern", "(a|b)*").node();
  std::string matching(200000, 'a');
  for (size_t i = 0; i < matching.size(); i += 3) matching[i] = 'b';
  std::string failing = matching;
  failing.back() = 'c';
  EXPECT_EQ(to_vector<bool>(run_one(node, {make_tensor<std::string>({2}, {matching, failing})})),
            (std::vector<bool>{true, false}));
}

// Smallest of `repeats` wall times of one RegexFullMatch run over `input`, in seconds.
double min_match_seconds(const graph::Node& node, const std::string& input, int repeats) {
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    const Tensor y = run_one(node, {make_tensor<std::string>({1}, {input})});
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    EXPECT_FALSE(to_vector<bool>(y)[0]);
    best = std::min(best, took.count());
  }
  return best;
}

TEST(RegexFullMatch, NestedQuantifiersRunInLinearTime) {
  // (a+)+b against a run of a's without the b backtracks exponentially in a backtracking engine: 34 a's did not
  // finish within minutes. RE2's time is linear in the input, so 10x the input costs about 10x the time; the
  // bound is 30x to absorb timer noise on a shared machine (quadratic growth would be 100x, exponential far more).
  const auto node = NodeBuilder("RegexFullMatch", 20).attr_string("pattern", "(a+)+b").node();
  EXPECT_EQ(to_vector<bool>(run_one(node, {make_tensor<std::string>({2}, {std::string(34, 'a'), "aaab"})})),
            (std::vector<bool>{false, true}));
  const double small = min_match_seconds(node, std::string(20000, 'a'), 5);
  const double large = min_match_seconds(node, std::string(200000, 'a'), 5);
  EXPECT_LT(large, 30 * small + 1e-3) << "20000 a's: " << small << " s, 200000 a's: " << large << " s";
}

TEST(TfIdfVectorizer, SkipGramsWeightsAndModes) {
  // Pool: unigrams {2, 3}, bigram (2, 3). Columns: 2 -> 0, 3 -> 1, (2, 3) -> 2.
  auto builder = [](const char* mode) {
    return NodeBuilder("TfIdfVectorizer", 9)
        .attr_string("mode", mode)
        .attr_int("min_gram_length", 1)
        .attr_int("max_gram_length", 2)
        .attr_int("max_skip_count", 1)
        .attr_ints("ngram_counts", {0, 2})
        .attr_ints("ngram_indexes", {0, 1, 2})
        .attr_ints("pool_int64s", {2, 3, 2, 3})
        .attr_floats("weights", {0.5f, 2.0f, 4.0f})
        .node();
  };
  const Tensor x = make_tensor<int32_t>({2, 4}, {2, 3, 2, 5, 2, 9, 3, 3});
  // Row 0: 2 x2, 3 x1, bigram (2,3) at skip 0 once, at skip 1 (2,_,2)? no, (3,_,5) no -> 1.
  // Row 1: 2 x1, 3 x2, bigrams skip 0: (2,9),(9,3),(3,3) none; skip 1: (2,3) yes, (9,3) no -> 1.
  EXPECT_EQ(to_vector<float>(run_one(builder("TF"), {x})), (std::vector<float>{2, 1, 1, 1, 2, 1}));
  EXPECT_EQ(to_vector<float>(run_one(builder("IDF"), {x})), (std::vector<float>{0.5f, 2, 4, 0.5f, 2, 4}));
  EXPECT_EQ(to_vector<float>(run_one(builder("TFIDF"), {x})), (std::vector<float>{1, 2, 4, 0.5f, 4, 4}));
}

TEST(TfIdfVectorizer, StringPoolAndInvalidCounts) {
  const auto node = NodeBuilder("TfIdfVectorizer", 9)
                        .attr_string("mode", "TF")
                        .attr_int("min_gram_length", 1)
                        .attr_int("max_gram_length", 1)
                        .attr_ints("ngram_counts", {0})
                        .attr_ints("ngram_indexes", {1, 0})
                        .attr_strings("pool_strings", {"a", "b"})
                        .node();
  const Tensor y = run_one(node, {make_tensor<std::string>({3}, {"b", "b", "c"})});
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{2, 0}));
  auto bad = run_kernel(NodeBuilder("TfIdfVectorizer", 9)
                            .attr_string("mode", "TF")
                            .attr_int("min_gram_length", 2)
                            .attr_int("max_gram_length", 1)
                            .attr_ints("ngram_counts", {0})
                            .attr_ints("ngram_indexes", {0})
                            .attr_ints("pool_int64s", {1})
                            .node(),
                        {make_tensor<int64_t>({1}, {1})});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace nxrt::cpu::testing
