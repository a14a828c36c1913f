// The JSON parser of the genai model folder files (genai/json.h) and the UTF-8 helpers it relies on.
#include "genai/json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "genai/unicode.h"

namespace nxrt::genai {
namespace {

JsonValue parse_ok(const std::string& text) {
  auto parsed = parse_json(text, "test");
  EXPECT_TRUE(parsed.has_value()) << text << ": " << parsed.status().to_string();
  return parsed ? *parsed : JsonValue();
}

std::string parse_error(const std::string& text) {
  auto parsed = parse_json(text, "test.json");
  EXPECT_FALSE(parsed.has_value()) << text;
  return parsed ? std::string() : parsed.status().message();
}

TEST(GenaiJson, ValuesOfEveryKind) {
  const JsonValue v = parse_ok(R"( {"a": [1, -2.5e3, true, false, null], "b": {"c": "x\ty\u00e9\ud83d\ude00"},
                                   "big": 12345678901234, "huge": 1e400, "a": "last"} )");
  ASSERT_TRUE(v.is_object());
  ASSERT_NE(v.find("b"), nullptr);
  EXPECT_EQ(v.find("b")->find("c")->as_string(), "x\ty\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_EQ(v.find("a")->as_string(), "last");  // the last of two members of a name
  EXPECT_EQ(v.members().front().second.items().size(), 5u);
  const auto& items = v.members().front().second.items();
  EXPECT_EQ(items[0].as_int(), 1);
  EXPECT_DOUBLE_EQ(items[1].as_number(), -2500.0);
  EXPECT_FALSE(items[1].as_int().has_value());
  EXPECT_TRUE(items[2].as_bool());
  EXPECT_TRUE(items[4].is_null());
  EXPECT_EQ(v.find("big")->as_int(), 12345678901234);
  EXPECT_TRUE(std::isinf(v.find("huge")->as_number()));
  EXPECT_EQ(v.find("missing"), nullptr);
  EXPECT_TRUE(parse_ok("[]").items().empty());
  EXPECT_TRUE(parse_ok("{}").members().empty());
  EXPECT_EQ(parse_ok("\"\"").as_string(), "");
}

TEST(GenaiJson, ErrorsNameTheLineAndColumn) {
  EXPECT_NE(parse_error("{\n  \"a\": 1,\n  \"b\" 2\n}").find("line 3, column 7"), std::string::npos);
  EXPECT_NE(parse_error("").find("unexpected end"), std::string::npos);
  EXPECT_NE(parse_error("[1, 2,]").find("unexpected character ']'"), std::string::npos);
  EXPECT_NE(parse_error("01").find("leading zero"), std::string::npos);
  EXPECT_NE(parse_error("1.").find("digits after"), std::string::npos);
  EXPECT_NE(parse_error("\"\\ud800\"").find("surrogate"), std::string::npos);
  EXPECT_NE(parse_error("\"\\udc00\"").find("lone low surrogate"), std::string::npos);
  EXPECT_NE(parse_error("\"\\x\"").find("unknown escape"), std::string::npos);
  EXPECT_NE(parse_error("\"a\nb\"").find("control character"), std::string::npos);
  EXPECT_NE(parse_error("\"\xC3\x28\"").find("invalid UTF-8"), std::string::npos);
  EXPECT_NE(parse_error("\"\xED\xA0\x80\"").find("invalid UTF-8"), std::string::npos);  // encoded surrogate
  EXPECT_NE(parse_error("\"\xC0\xAF\"").find("invalid UTF-8"), std::string::npos);      // overlong
  EXPECT_NE(parse_error("{\"a\" 1}").find("expected ':'"), std::string::npos);
  EXPECT_NE(parse_error("[1] x").find("text after"), std::string::npos);
  EXPECT_NE(parse_error("tru").find("unexpected character 't'"), std::string::npos);
  EXPECT_EQ(parse_error("{").rfind("test.json: ", 0), 0u);
}

TEST(GenaiJson, DeepNestingIsAnErrorNotACrash) {
  const std::string deep(100000, '[');
  EXPECT_NE(parse_error(deep).find("nesting deeper than"), std::string::npos);
  const std::string ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_TRUE(parse_json(ok, "test").has_value());
}

TEST(GenaiJson, MissingFileIsNoSuchFile) {
  auto parsed = read_json_file("/nonexistent/dir/genai_config.json");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.status().code(), StatusCode::kNoSuchFile);
  EXPECT_NE(parsed.status().message().find("/nonexistent/dir/genai_config.json"), std::string::npos);
}

TEST(GenaiUnicode, Utf8RoundTripAndClasses) {
  for (char32_t c : {U'\0', U'A', U'\u00e9', U'\u0800', U'\uffff', U'\U00010000', U'\U0010ffff'}) {
    std::string bytes;
    append_utf8(c, bytes);
    size_t pos = 0;
    char32_t back = 0;
    ASSERT_TRUE(decode_utf8(bytes, pos, back));
    EXPECT_EQ(back, c);
    EXPECT_EQ(pos, bytes.size());
  }
  EXPECT_EQ(first_invalid_utf8("ok\xF4\x90\x80\x80"), 2u);  // above U+10FFFF
  EXPECT_EQ(first_invalid_utf8("ok\xE2\x82"), 2u);          // truncated
  EXPECT_TRUE(is_letter(U'\u00e9') && is_letter(U'\u65e5') && !is_letter(U'1') && !is_letter(U'\U0001F600'));
  EXPECT_TRUE(is_number(U'7') && is_number(U'\u0663') && is_number(U'\u00bd') && !is_number(U'x'));
  EXPECT_TRUE(is_white_space(U'\u3000') && is_white_space(U'\u0085') && !is_white_space(U'\u200b'));
}

}  // namespace
}  // namespace nxrt::genai
