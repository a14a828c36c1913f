// libFuzzer entry point: the genai tokenizer and chat templates on arbitrary bytes. The input is a tokenizer.json
// text, a NUL byte, then a text to encode (no NUL: the whole input is the text, for the GPT-2-style tokenizer built
// in below); after a first byte 0x01, a chat template rendered for a fixed conversation; after 0x02, a text for
// the Unigram tokenizer built in below. Loading, encoding,
// decoding (the encoded ids, and ids taken from the text's bytes), parsing and rendering must yield a value or a
// Status; crashes, hangs and sanitizer reports are bugs.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "genai/chat.h"
#include "genai/json.h"
#include "genai/tokenizer.h"

namespace {

// A byte-level BPE tokenizer.json: the 256 byte symbols, two merges, two added tokens and a template.
std::string builtin_tokenizer_json() {
  std::string vocab;
  int next = 0x100;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    const int c = printable ? b : next++;
    char escaped[16];
    std::snprintf(escaped, sizeof escaped, "\"\\u%04x\"", c);
    vocab += std::string(escaped) + ": " + std::to_string(b) + ", ";
  }
  vocab += "\"ab\": 256, \"abc\": 257";
  return "{\"added_tokens\": [{\"id\": 258, \"content\": \"<s>\", \"special\": true, \"normalized\": false},"
         " {\"id\": 259, \"content\": \"  \", \"normalized\": true, \"lstrip\": true}],"
         " \"normalizer\": null, \"pre_tokenizer\": {\"type\": \"ByteLevel\", \"add_prefix_space\": false},"
         " \"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": \"<s>\"}},"
         " {\"Sequence\": {\"id\": \"A\"}}], \"special_tokens\": {\"<s>\": {\"ids\": [258]}}},"
         " \"decoder\": {\"type\": \"ByteLevel\"}, \"model\": {\"type\": \"BPE\", \"vocab\": {" +
         vocab + "}, \"merges\": [\"a b\", \"ab c\"]}}";
}

// A Unigram tokenizer.json: WhitespaceSplit then Metaspace, single letters, a few longer pieces, <unk> and two
// byte-fallback pieces (most bytes have none, so unknown runs take both paths).
std::string builtin_unigram_json() {
  std::string vocab = R"(["<unk>", 0.0], ["\u2581", -2.0], ["<0x41>", -9.0], ["<0xC3>", -9.0])";
  for (char c = 'a'; c <= 'z'; ++c) vocab += ", [\"" + std::string(1, c) + "\", -" + std::to_string(3 + c % 5) + "]";
  vocab += R"(, ["ab", -4.0], ["abc", -5.5], ["\u2581a", -3.0], ["bc", -4.0], ["\u00e9", -6.0],)"
           R"( ["\u00e9t\u00e9", -7.0])";
  return R"({"normalizer": {"type": "NFC"}, "pre_tokenizer": {"type": "Sequence", "pretokenizers": [)"
         R"({"type": "WhitespaceSplit"}, {"type": "Metaspace", "replacement": "\u2581"}]},)"
         R"( "decoder": {"type": "Metaspace", "replacement": "\u2581"},)"
         R"( "model": {"type": "Unigram", "unk_id": 0, "byte_fallback": true, "vocab": [)" + vocab + "]}}";
}

void exercise(const nxrt::genai::Tokenizer& tokenizer, std::string_view text) {
  for (const bool special : {true, false}) {
    auto ids = tokenizer.encode(text, special);
    if (ids) (void)tokenizer.decode(*ids, !special);
  }
  std::vector<int32_t> raw;
  for (size_t i = 0; i + 4 <= text.size() && raw.size() < 64; i += 4) {
    int32_t id = 0;
    for (size_t j = 0; j < 4; ++j) id = (id << 8) | static_cast<uint8_t>(text[i + j]);
    raw.push_back(id % 512);
  }
  (void)tokenizer.decode(raw, false);
}

void render_template(std::string_view source) {
  static const std::string kMessages =
      R"([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi there"},)"
      R"( {"role": "assistant", "content": "Hello!", "tool_calls": [{"function": {"name": "f", "arguments": {}}}]},)"
      R"( {"role": "user", "content": "Thanks"}])";
  auto formatter = nxrt::genai::ChatFormatter::from_source(std::string(source), R"({"bos_token": "<s>"})");
  if (formatter) (void)formatter->apply(kMessages, true, R"([{"type": "function", "function": {"name": "f"}}])");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (!bytes.empty() && bytes[0] == '\x01') {
    render_template(bytes.substr(1));
    return 0;
  }
  if (!bytes.empty() && bytes[0] == '\x02') {
    static const auto unigram = nxrt::genai::Tokenizer::from_json(
        *nxrt::genai::parse_json(builtin_unigram_json(), "builtin unigram"), "builtin unigram");
    if (unigram) exercise(*unigram, bytes.substr(1));
    return 0;
  }
  const size_t split = bytes.find('\0');
  if (split == std::string_view::npos) {
    static const auto builtin = nxrt::genai::Tokenizer::from_json(
        *nxrt::genai::parse_json(builtin_tokenizer_json(), "builtin"), "builtin");
    if (builtin) exercise(*builtin, bytes);
    return 0;
  }
  auto json = nxrt::genai::parse_json(bytes.substr(0, split), "input");
  if (!json) return 0;
  auto tokenizer = nxrt::genai::Tokenizer::from_json(*json, "input");
  if (tokenizer) exercise(*tokenizer, bytes.substr(split + 1));
  return 0;
}
