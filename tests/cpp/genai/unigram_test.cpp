// The Unigram vocabulary model (genai/unigram_model.h), the way it reads scores, and a Unigram tokenizer.json with
// the compatibility normalizer (the Python suite compares whole trained models with the tokenizers package).
#include "genai/unigram_model.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "genai/json.h"
#include "genai/tokenizer.h"
#include "genai/unicode.h"

namespace nxrt::genai {
namespace {

std::vector<int32_t> encode(const UnigramModel& model, std::string_view word) {
  std::vector<int32_t> ids;
  const Status status = model.encode_word(word, ids);
  EXPECT_TRUE(status.is_ok()) << word << ": " << status.to_string();
  return ids;
}

TEST(GenaiUnigram, ScoresAreReadAsTheTokenizersLibraryReadsThem) {
  // 17 significant digits: the uint64 significand is rounded to double, then divided by 1e16 once.
  EXPECT_EQ(UnigramModel::score_as_tokenizers_reads("-7.8814749909977735"), -7.881474990997773);
  EXPECT_EQ(UnigramModel::score_as_tokenizers_reads("-5.6091232152379495"), -5.6091232152379495);
  EXPECT_EQ(UnigramModel::score_as_tokenizers_reads("0"), 0.0);
  EXPECT_EQ(UnigramModel::score_as_tokenizers_reads("-25e-1"), -2.5);
  EXPECT_EQ(UnigramModel::score_as_tokenizers_reads("1.0E+1"), 10.0);
  EXPECT_EQ(UnigramModel::score_as_tokenizers_reads("3.5000000000000000000000001"), 3.5);  // digits past uint64
  EXPECT_EQ(UnigramModel::score_as_tokenizers_reads("1e-400"), 0.0);
  EXPECT_FALSE(UnigramModel::score_as_tokenizers_reads("1e400").has_value());
  EXPECT_FALSE(UnigramModel::score_as_tokenizers_reads("abc").has_value());
  EXPECT_FALSE(UnigramModel::score_as_tokenizers_reads("").has_value());
  EXPECT_FALSE(UnigramModel::score_as_tokenizers_reads("1.5x").has_value());
}

TEST(GenaiUnigram, JsonNumbersKeepTheirLiteral) {
  auto parsed = parse_json(R"([-7.8814749909977735, 3, "s"])", "test");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->items()[0].number_literal(), "-7.8814749909977735");
  EXPECT_EQ(parsed->items()[0].as_string(), "");  // a number is not a string
  EXPECT_EQ(parsed->items()[1].number_literal(), "3");
  EXPECT_EQ(parsed->items()[2].number_literal(), "");
}

TEST(GenaiUnigram, BestPathTiesUnknownRunsAndByteFallback) {
  std::vector<std::pair<std::string, double>> pieces = {
      {"<unk>", 0.0}, {"a", -1.0}, {"b", -1.0}, {"ab", -2.0}, {"abc", -2.5}, {"c", -0.1}, {"<0x7A>", -20.0}};
  auto model = UnigramModel::create(pieces, 0, false, "test");
  ASSERT_TRUE(model.has_value()) << model.status().to_string();
  // "ab" (met from start 0) ties a + b (met from start 1, -2 too): the first met stays.
  EXPECT_EQ(encode(*model, "ab"), (std::vector<int32_t>{3}));
  EXPECT_EQ(encode(*model, "abc"), (std::vector<int32_t>{3, 5}));     // ab + c (-2.1) beats abc (-2.5)
  EXPECT_EQ(encode(*model, "zzab"), (std::vector<int32_t>{0, 3}));    // one fused <unk> for "zz"
  EXPECT_TRUE(encode(*model, "").empty());
  auto fallback = UnigramModel::create(pieces, 0, true, "test");
  ASSERT_TRUE(fallback.has_value());
  EXPECT_EQ(encode(*fallback, "zza"), (std::vector<int32_t>{6, 6, 1}));  // every byte has its piece
  EXPECT_EQ(encode(*fallback, "qa"), (std::vector<int32_t>{0, 1}));      // <0x71> is missing: <unk>
  auto no_unknown = UnigramModel::create(pieces, std::nullopt, false, "test");
  ASSERT_TRUE(no_unknown.has_value());
  std::vector<int32_t> ids;
  const Status status = no_unknown->encode_word("aq", ids);
  EXPECT_FALSE(status.is_ok());
  EXPECT_NE(status.message().find("'q' has no piece"), std::string::npos) << status.message();
  EXPECT_FALSE(UnigramModel::create(pieces, 7, false, "test").has_value());  // unk_id outside the vocabulary
}

TEST(GenaiUnigram, TokenizerWithCompatibilityNormalizerAndWhitespaceSplit) {
  auto json = parse_json(R"({"normalizer": {"type": "NFKC"},
      "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"},
                                                              {"type": "Metaspace", "replacement": "\u2581"}]},
      "decoder": {"type": "Metaspace", "replacement": "\u2581"},
      "model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0], ["\u2581fi", -1], ["\u2581", -3],
                                                          ["f", -2], ["i", -2], ["1", -2]]}})",
                         "test");
  ASSERT_TRUE(json.has_value()) << json.status().to_string();
  auto tokenizer = Tokenizer::from_json(*json, "test");
  ASSERT_TRUE(tokenizer.has_value()) << tokenizer.status().to_string();
  // U+FB01 (the fi ligature) is "fi" under NFKC, U+2460 (circled one) is "1"; white space only splits words.
  auto ids = tokenizer->encode("\xEF\xAC\x81  fi\t\xE2\x91\xA0", false);
  ASSERT_TRUE(ids.has_value()) << ids.status().to_string();
  EXPECT_EQ(*ids, (std::vector<int32_t>{1, 1, 2, 5}));
  auto text = tokenizer->decode(*ids);
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(*text, "fi fi 1");
  EXPECT_EQ(normalize("\xEF\xAC\x81", NormalForm::kNfkd), "fi");
  EXPECT_EQ(normalize("\xC3\xA9", NormalForm::kNfd), "e\xCC\x81");
  EXPECT_EQ(normalize("e\xCC\x81", NormalForm::kNfkc), "\xC3\xA9");
}

}  // namespace
}  // namespace nxrt::genai
