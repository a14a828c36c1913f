// Tokenizer from tokenizer.json (contract in tokenizer.h): loading and the encode / decode pipelines.
#include "genai/tokenizer.h"

#include <algorithm>
#include <array>
#include <unordered_map>
#include <utility>

#include "genai/bpe_model.h"
#include "genai/byte_level.h"
#include "genai/json.h"
#include "genai/string_map.h"
#include "genai/text_steps.h"
#include "genai/unigram_model.h"
#include "genai/unicode.h"

namespace nxrt::genai {

struct AddedToken {
  std::string content;
  int32_t id = 0;
  bool special = false, normalized = false, lstrip = false, rstrip = false, single_word = false;
};

struct Tokenizer::State {
  BpeModel bpe;                         // model BPE
  std::optional<UnigramModel> unigram;  // model Unigram (then `bpe` is empty)
  std::optional<int32_t> unk;
  bool ignore_merges = false, byte_fallback = false, fuse_unk = false;
  Normalizer normalizer;
  Decoder decoder;
  // Pre-tokenizer: byte-level (pieces split by `splits`, each applied to the pieces of the one before, and mapped
  // to byte-level symbols), Metaspace, or none (a piece is one word of characters).
  bool byte_level = false, add_prefix_space = false;
  std::vector<SplitPattern> splits;
  bool metaspace = false, metaspace_split = false;
  bool whitespace_split = false;  // WhitespaceSplit before Metaspace: words at white space, the space dropped
  std::string replacement;
  enum class Prepend { kAlways, kFirst, kNever } prepend = Prepend::kAlways;
  std::vector<AddedToken> added;
  std::unordered_map<int32_t, size_t> added_by_id;
  StringMap<size_t> added_by_content;
  std::array<std::vector<size_t>, 256> added_by_first_byte;  // indices into `added`
  std::vector<int32_t> prefix, suffix;  // the post-processor's special tokens around the sequence

  // The vocabulary model's token of an id, id of a token, and id bound (the added tokens aside).
  const std::string* model_token(int32_t id) const { return unigram ? unigram->token_of(id) : bpe.token_of(id); }
  std::optional<int32_t> model_id(std::string_view token) const {
    return unigram ? unigram->id_of(token) : bpe.id_of(token);
  }
  int64_t model_id_bound() const { return unigram ? unigram->id_bound() : bpe.id_bound(); }
};

namespace {

Status not_implemented(std::string_view what, std::string_view key, std::string_view type) {
  return make_error(StatusCode::kNotImplemented, what, ": ", key, " of type '", type, "' is not supported");
}

Status invalid(std::string_view what, std::string_view message) {
  return make_error(StatusCode::kInvalidArgument, what, ": ", message);
}

std::string type_of(const JsonValue* v) {
  if (v == nullptr || !v->is_object()) return "";
  const JsonValue* type = v->find("type");
  return type != nullptr && type->is_string() ? type->as_string() : "";
}

bool flag(const JsonValue& object, std::string_view key, bool fallback) {
  const JsonValue* v = object.find(key);
  return v != nullptr && v->is_bool() ? v->as_bool() : fallback;
}

// A member that is absent or null counts as absent.
bool present(const JsonValue* v) { return v != nullptr && !v->is_null(); }

Expected<BpeModel> load_bpe(const JsonValue& model, std::string_view what, Tokenizer::State& state) {
  const JsonValue* vocab = model.find("vocab");
  const JsonValue* merges = model.find("merges");
  if (vocab == nullptr || !vocab->is_object() || merges == nullptr || !merges->is_array()) {
    return invalid(what, "model.vocab must be an object and model.merges an array");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    const JsonValue* v = model.find(key);
    if (present(v) && (!v->is_string() || !v->as_string().empty())) {
      return make_error(StatusCode::kNotImplemented, what, ": model.", key, " is not supported");
    }
  }
  const JsonValue* dropout = model.find("dropout");
  if (present(dropout) && (!dropout->is_number() || dropout->as_number() != 0.0)) {
    return make_error(StatusCode::kNotImplemented, what, ": model.dropout is not supported");
  }
  state.byte_fallback = flag(model, "byte_fallback", false);
  state.fuse_unk = flag(model, "fuse_unk", false);
  state.ignore_merges = flag(model, "ignore_merges", false);
  std::vector<std::pair<std::string, int32_t>> tokens;
  tokens.reserve(vocab->members().size());
  for (const auto& [token, id] : vocab->members()) {
    if (!id.as_int() || *id.as_int() < 0 || *id.as_int() > INT32_MAX) {
      return invalid(what, "model.vocab['" + token + "'] must be an id in [0, 2^31)");
    }
    tokens.emplace_back(token, static_cast<int32_t>(*id.as_int()));
  }
  std::vector<std::pair<std::string, std::string>> pairs;
  pairs.reserve(merges->items().size());
  for (const JsonValue& merge : merges->items()) {
    if (merge.is_string()) {  // "left right"
      const std::string& text = merge.as_string();
      const size_t space = text.find(' ');
      if (space == std::string::npos || text.find(' ', space + 1) != std::string::npos) {
        return invalid(what, "merge '" + text + "' must be two tokens separated by one space");
      }
      pairs.emplace_back(text.substr(0, space), text.substr(space + 1));
    } else if (merge.is_array() && merge.items().size() == 2 && merge.items()[0].is_string() &&
               merge.items()[1].is_string()) {
      pairs.emplace_back(merge.items()[0].as_string(), merge.items()[1].as_string());
    } else {
      return invalid(what, "model.merges entries must be \"left right\" strings or [left, right] pairs");
    }
  }
  TRY_ASSIGN(BpeModel bpe, BpeModel::create(std::move(tokens), pairs, what));
  if (const JsonValue* unk = model.find("unk_token"); present(unk)) {
    if (!unk->is_string() || !bpe.id_of(unk->as_string())) return invalid(what, "model.unk_token is not a token");
    state.unk = *bpe.id_of(unk->as_string());
  }
  return bpe;
}

Expected<UnigramModel> load_unigram(const JsonValue& model, std::string_view what) {
  const JsonValue* vocab = model.find("vocab");
  if (vocab == nullptr || !vocab->is_array()) return invalid(what, "model.vocab must be an array of [piece, score]");
  std::vector<std::pair<std::string, double>> pieces;
  pieces.reserve(vocab->items().size());
  for (const JsonValue& entry : vocab->items()) {
    if (!entry.is_array() || entry.items().size() != 2 || !entry.items()[0].is_string() ||
        !entry.items()[1].is_number()) {
      return invalid(what, "model.vocab entries must be [piece, score] pairs");
    }
    const JsonValue& score = entry.items()[1];
    const auto read = score.number_literal().empty()
                          ? std::optional<double>(score.as_number())
                          : UnigramModel::score_as_tokenizers_reads(score.number_literal());
    if (!read) return invalid(what, "model.vocab score '" + score.number_literal() + "' is out of range");
    pieces.emplace_back(entry.items()[0].as_string(), *read);
  }
  std::optional<int32_t> unk_id;
  if (const JsonValue* unk = model.find("unk_id"); present(unk)) {
    if (!unk->as_int() || *unk->as_int() < 0 || *unk->as_int() > INT32_MAX) {
      return invalid(what, "model.unk_id must be an id in [0, 2^31)");
    }
    unk_id = static_cast<int32_t>(*unk->as_int());
  }
  return UnigramModel::create(std::move(pieces), unk_id, flag(model, "byte_fallback", false), what);
}

Status load_added_tokens(const JsonValue* list, std::string_view what, Tokenizer::State& state) {
  if (!present(list)) return Status::ok();
  if (!list->is_array()) return invalid(what, "added_tokens must be an array");
  for (const JsonValue& entry : list->items()) {
    const JsonValue* id = entry.find("id");
    const JsonValue* content = entry.find("content");
    if (id == nullptr || !id->as_int() || *id->as_int() < 0 || *id->as_int() > INT32_MAX || content == nullptr ||
        !content->is_string() || content->as_string().empty()) {
      return invalid(what, "every added token needs an id in [0, 2^31) and a nonempty content");
    }
    AddedToken token;
    token.content = content->as_string();
    token.id = static_cast<int32_t>(*id->as_int());
    token.special = flag(entry, "special", false);
    token.normalized = flag(entry, "normalized", !token.special);
    token.lstrip = flag(entry, "lstrip", false);
    token.rstrip = flag(entry, "rstrip", false);
    token.single_word = flag(entry, "single_word", false);
    if (first_invalid_utf8(token.content) != token.content.size()) return invalid(what, "an added token is not UTF-8");
    state.added_by_id[token.id] = state.added.size();
    state.added_by_content[token.content] = state.added.size();
    state.added_by_first_byte[static_cast<uint8_t>(token.content[0])].push_back(state.added.size());
    state.added.push_back(std::move(token));
  }
  return Status::ok();
}

// TemplateProcessing's single-sequence template: special tokens before and after $A.
Status load_template(const JsonValue& post, std::string_view what, Tokenizer::State& state) {
  const JsonValue* single = post.find("single");
  const JsonValue* specials = post.find("special_tokens");
  if (single == nullptr || !single->is_array()) return invalid(what, "post_processor.single must be an array");
  bool after = false;
  for (const JsonValue& item : single->items()) {
    if (const JsonValue* seq = item.find("Sequence")) {
      const JsonValue* id = seq->find("id");
      if (id == nullptr || !id->is_string() || id->as_string() != "A" || after) {
        return make_error(StatusCode::kNotImplemented, what, ": post_processor.single must hold sequence A once");
      }
      after = true;
      continue;
    }
    const JsonValue* special = item.find("SpecialToken");
    const JsonValue* name = special != nullptr ? special->find("id") : nullptr;
    const JsonValue* entry = name != nullptr && name->is_string() && specials != nullptr
                                 ? specials->find(name->as_string()) : nullptr;
    const JsonValue* ids = entry != nullptr ? entry->find("ids") : nullptr;
    if (ids == nullptr || !ids->is_array()) {
      return invalid(what, "post_processor.single items must be Sequence or SpecialToken listed in special_tokens");
    }
    for (const JsonValue& id : ids->items()) {
      if (!id.as_int() || *id.as_int() < 0 || *id.as_int() > INT32_MAX) return invalid(what, "bad special token id");
      (after ? state.suffix : state.prefix).push_back(static_cast<int32_t>(*id.as_int()));
    }
  }
  if (!after) return invalid(what, "post_processor.single has no Sequence");
  return Status::ok();
}

// Metaspace: spaces written as `replacement`, prepended to a word by prepend_scheme, words split at it.
Status load_metaspace(const JsonValue* pre, std::string_view what, Tokenizer::State& state) {
  const JsonValue* replacement = pre->find("replacement");
  const JsonValue* scheme = pre->find("prepend_scheme");
  state.metaspace = true;
  state.metaspace_split = flag(*pre, "split", true);
  state.replacement = replacement != nullptr && replacement->is_string() ? replacement->as_string() : "\xE2\x96\x81";
  if (scheme != nullptr && scheme->is_string()) {
    const std::string& name = scheme->as_string();
    if (name != "always" && name != "first" && name != "never") return invalid(what, "unknown prepend_scheme");
    state.prepend = name == "always"  ? Tokenizer::State::Prepend::kAlways
                    : name == "first" ? Tokenizer::State::Prepend::kFirst
                                      : Tokenizer::State::Prepend::kNever;
  } else if (!flag(*pre, "add_prefix_space", true)) {
    state.prepend = Tokenizer::State::Prepend::kNever;
  }
  if (state.replacement.empty()) return invalid(what, "Metaspace needs a replacement");
  return Status::ok();
}

// ByteLevel (its GPT-2 split when use_regex), a Sequence of Split pre-tokenizers with a known pattern and behavior
// Isolated followed by ByteLevel, Metaspace alone or after WhitespaceSplit, or none.
Status load_pre_tokenizer(const JsonValue* pre, std::string_view what, Tokenizer::State& state) {
  const std::string type = present(pre) ? type_of(pre) : "null";
  if (type == "null") return Status::ok();
  if (type == "Metaspace") return load_metaspace(pre, what, state);
  if (const JsonValue* list = type == "Sequence" ? pre->find("pretokenizers") : nullptr;
      list != nullptr && list->is_array() && list->items().size() == 2 &&
      type_of(&list->items()[0]) == "WhitespaceSplit" && type_of(&list->items()[1]) == "Metaspace") {
    state.whitespace_split = true;
    return load_metaspace(&list->items()[1], what, state);
  }
  std::vector<const JsonValue*> steps;
  if (type == "Sequence") {
    const JsonValue* list = pre->find("pretokenizers");
    if (list == nullptr || !list->is_array()) return invalid(what, "pre_tokenizer.pretokenizers must be an array");
    for (const JsonValue& step : list->items()) steps.push_back(&step);
  } else {
    steps.push_back(pre);
  }
  for (const JsonValue* step : steps) {
    const std::string step_type = type_of(step);
    if (step_type == "ByteLevel" && !state.byte_level) {
      state.byte_level = true;
      state.add_prefix_space = flag(*step, "add_prefix_space", true);
      if (flag(*step, "use_regex", true)) state.splits.push_back(SplitPattern::kGpt2);
      continue;
    }
    if (step_type == "Split" && !state.byte_level) {
      const JsonValue* pattern = step->find("pattern");
      const JsonValue* regex = pattern != nullptr ? pattern->find("Regex") : nullptr;
      const JsonValue* behavior = step->find("behavior");
      const auto known = regex != nullptr && regex->is_string() ? known_split_pattern(regex->as_string()) : std::nullopt;
      if (!known || behavior == nullptr || !behavior->is_string() || behavior->as_string() != "Isolated" ||
          flag(*step, "invert", false)) {
        return make_error(StatusCode::kNotImplemented, what, ": pre_tokenizer Split is supported with behavior ",
                          "Isolated and the GPT-2, Llama 3 or Qwen2 pattern only");
      }
      state.splits.push_back(*known);
      continue;
    }
    return not_implemented(what, "pre_tokenizer", type == "Sequence" ? "Sequence of " + step_type : type);
  }
  if (!state.byte_level) return not_implemented(what, "pre_tokenizer", type);
  return Status::ok();
}

bool is_word_character(char32_t c) { return is_letter(c) || is_number(c) || c == U'_'; }

// The code point ending just before byte `end` (end > 0, text valid UTF-8).
char32_t code_point_before(std::string_view text, size_t end) {
  size_t begin = end - 1;
  while (begin > 0 && (static_cast<uint8_t>(text[begin]) & 0xC0) == 0x80) --begin;
  char32_t c = 0;
  decode_utf8(text, begin, c);
  return c;
}

struct Piece {
  size_t begin, end;
  const AddedToken* token;  // null: plain text
};

// Splits [begin, end) of text at the added tokens with normalized == `normalized`, leftmost then longest.
void split_added(const Tokenizer::State& s, std::string_view text, size_t begin, size_t end, bool normalized,
                 std::vector<Piece>& out) {
  size_t cursor = begin;
  for (size_t p = begin; p < end;) {
    const AddedToken* best = nullptr;
    for (const size_t index : s.added_by_first_byte[static_cast<uint8_t>(text[p])]) {
      const AddedToken& token = s.added[index];
      if (token.normalized != normalized || token.content.size() > end - p ||
          text.compare(p, token.content.size(), token.content) != 0 ||
          (best != nullptr && best->content.size() >= token.content.size())) {
        continue;
      }
      if (token.single_word) {
        const size_t after = p + token.content.size();
        size_t at = after;
        char32_t next = 0;
        if ((p > begin && is_word_character(code_point_before(text, p))) ||
            (after < end && decode_utf8(text, at, next) && is_word_character(next))) {
          continue;
        }
      }
      best = &token;
    }
    if (best == nullptr) {
      ++p;
      while (p < end && (static_cast<uint8_t>(text[p]) & 0xC0) == 0x80) ++p;
      continue;
    }
    size_t match_begin = p, match_end = p + best->content.size();
    if (best->lstrip) {
      while (match_begin > cursor && is_white_space(code_point_before(text, match_begin))) {
        --match_begin;
        while ((static_cast<uint8_t>(text[match_begin]) & 0xC0) == 0x80) --match_begin;
      }
    }
    if (best->rstrip) {
      size_t at = match_end;
      char32_t c = 0;
      while (at < end && decode_utf8(text, at, c) && is_white_space(c)) match_end = at;
    }
    if (match_begin > cursor) out.push_back({cursor, match_begin, nullptr});
    out.push_back({match_begin, match_end, best});
    cursor = p = match_end;
  }
  if (cursor < end) out.push_back({cursor, end, nullptr});
}

}  // namespace

Tokenizer::Tokenizer(std::unique_ptr<State> state) : state_(std::move(state)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Expected<Tokenizer> Tokenizer::from_file(const std::string& path) {
  TRY_ASSIGN(const JsonValue json, read_json_file(path));
  return from_json(json, path);
}

Expected<Tokenizer> Tokenizer::from_json(const JsonValue& json, std::string_view what) {
  if (!json.is_object()) return invalid(what, "a tokenizer.json holds an object");
  auto state = std::make_unique<State>();
  const JsonValue* model = json.find("model");
  if (model == nullptr || !model->is_object()) return invalid(what, "model must be an object");
  const std::string model_type = type_of(model);
  if (model_type == "Unigram") {
    TRY_ASSIGN(state->unigram, load_unigram(*model, what));
  } else if (model_type.empty() || model_type == "BPE") {
    TRY_ASSIGN(state->bpe, load_bpe(*model, what, *state));
  } else {
    return not_implemented(what, "model", model_type);
  }
  TRY_ASSIGN(state->normalizer, Normalizer::from_json(json.find("normalizer"), what));
  TRY(load_pre_tokenizer(json.find("pre_tokenizer"), what, *state));
  TRY_ASSIGN(state->decoder, Decoder::from_json(json.find("decoder"), what));
  if (const JsonValue* post = json.find("post_processor"); present(post)) {
    const std::string post_type = type_of(post);
    if (post_type == "TemplateProcessing") {
      TRY(load_template(*post, what, *state));
    } else if (post_type != "ByteLevel") {
      return not_implemented(what, "post_processor", post_type);
    }
  }
  TRY(load_added_tokens(json.find("added_tokens"), what, *state));
  return Tokenizer(std::move(state));
}

namespace {

// Appends the ids of one word: its symbols (byte-level characters, or characters with the byte fallback or the
// unknown token for those outside the vocabulary) merged by the model.
Status encode_word(const Tokenizer::State& s, std::string_view word, std::vector<int32_t>& ids) {
  std::string symbol_text;
  if (s.byte_level) {
    append_byte_level(word, symbol_text);
  } else {
    symbol_text.assign(word);
  }
  if (s.unigram) return s.unigram->encode_word(symbol_text, ids);
  if (s.ignore_merges) {
    if (const auto whole = s.bpe.id_of(symbol_text)) {
      ids.push_back(*whole);
      return Status::ok();
    }
  }
  std::vector<int32_t> symbols;
  bool last_unknown = false;
  for (size_t at = 0; at < symbol_text.size();) {
    const size_t start = at;
    char32_t c = 0;
    decode_utf8(symbol_text, at, c);
    const std::string_view symbol = std::string_view(symbol_text).substr(start, at - start);
    if (const auto id = s.bpe.id_of(symbol)) {
      symbols.push_back(*id);
      last_unknown = false;
      continue;
    }
    if (s.byte_fallback) {
      std::vector<int32_t> bytes;
      for (const char b : symbol) {
        static constexpr char kHex[] = "0123456789ABCDEF";
        const uint8_t v = static_cast<uint8_t>(b);
        const std::string name = std::string("<0x") + kHex[v >> 4] + kHex[v & 15] + ">";
        if (const auto id = s.bpe.id_of(name)) bytes.push_back(*id);
      }
      if (bytes.size() == symbol.size()) {
        symbols.insert(symbols.end(), bytes.begin(), bytes.end());
        last_unknown = false;
        continue;
      }
    }
    if (!s.unk) {
      return make_error(StatusCode::kInvalidArgument, "tokenizer: character U+", static_cast<uint32_t>(c),
                        " is not in the vocabulary and there is no unk_token");
    }
    if (!(s.fuse_unk && last_unknown)) symbols.push_back(*s.unk);
    last_unknown = true;
  }
  s.bpe.merge_word(symbols);
  ids.insert(ids.end(), symbols.begin(), symbols.end());
  return Status::ok();
}

// Metaspace over one piece (or one WhitespaceSplit word): spaces become the replacement, which is prepended as
// the scheme says, and with split each word runs up to the next replacement.
Status encode_metaspace(const Tokenizer::State& s, std::string_view piece, bool at_start, std::vector<int32_t>& ids) {
  std::string text = replace_all(piece, " ", s.replacement);
  const bool prepend = s.prepend == Tokenizer::State::Prepend::kAlways ||
                       (s.prepend == Tokenizer::State::Prepend::kFirst && at_start);
  if (prepend && text.compare(0, s.replacement.size(), s.replacement) != 0) text.insert(0, s.replacement);
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = s.metaspace_split ? text.find(s.replacement, begin + 1) : std::string::npos;
    if (end == std::string::npos) end = text.size();
    TRY(encode_word(s, std::string_view(text).substr(begin, end - begin), ids));
    begin = end;
  }
  return Status::ok();
}

// Pre-tokenizes one normalized piece between added tokens and appends the ids of its words. `at_start`: the
// piece begins the text (Metaspace's prepend_scheme "first").
Status encode_piece(const Tokenizer::State& s, std::string_view piece, bool at_start, std::vector<int32_t>& ids) {
  if (s.metaspace && s.whitespace_split) {
    // Words are the runs without white space; only a word at the start of the text is "first".
    constexpr size_t kNoWord = std::string_view::npos;
    size_t word = kNoWord;  // the start of the current word
    for (size_t at = 0; at < piece.size();) {
      const size_t begin = at;
      char32_t c = 0;
      if (!decode_utf8(piece, at, c)) ++at;  // (the text is valid UTF-8)
      if (!is_white_space(c)) {
        if (word == kNoWord) word = begin;
      } else if (word != kNoWord) {
        TRY(encode_metaspace(s, piece.substr(word, begin - word), at_start && word == 0, ids));
        word = kNoWord;
      }
    }
    if (word != kNoWord) TRY(encode_metaspace(s, piece.substr(word), at_start && word == 0, ids));
    return Status::ok();
  }
  if (s.metaspace) return encode_metaspace(s, piece, at_start, ids);
  if (!s.byte_level) return encode_word(s, piece, ids);
  std::string segment(piece);
  if (s.add_prefix_space && segment.front() != ' ') segment.insert(segment.begin(), ' ');
  std::vector<std::pair<size_t, size_t>> words{{0, segment.size()}}, finer;
  for (const SplitPattern pattern : s.splits) {
    finer.clear();
    for (const auto& [begin, end] : words) {
      for (const auto& [b, e] : split_by_pattern(std::string_view(segment).substr(begin, end - begin), pattern)) {
        finer.emplace_back(begin + b, begin + e);
      }
    }
    words.swap(finer);
  }
  for (const auto& [begin, end] : words) TRY(encode_word(s, std::string_view(segment).substr(begin, end - begin), ids));
  return Status::ok();
}

}  // namespace

Expected<std::vector<int32_t>> Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  const State& s = *state_;
  if (const size_t bad = first_invalid_utf8(text); bad != text.size()) {
    return make_error(StatusCode::kInvalidArgument, "tokenizer: the text is not valid UTF-8 (byte ", bad, ")");
  }
  std::vector<int32_t> ids(s.prefix.begin(), add_special_tokens ? s.prefix.end() : s.prefix.begin());
  std::vector<Piece> raw, pieces;
  split_added(s, text, 0, text.size(), false, raw);
  for (const Piece& piece : raw) {
    if (piece.token != nullptr) {
      ids.push_back(piece.token->id);
      continue;
    }
    // The added tokens matched on normalized text are found in the normalized piece.
    const std::string normalized = s.normalizer.apply(text.substr(piece.begin, piece.end - piece.begin));
    pieces.clear();
    if (!normalized.empty()) split_added(s, normalized, 0, normalized.size(), true, pieces);
    for (const Piece& part : pieces) {
      if (part.token != nullptr) {
        ids.push_back(part.token->id);
      } else {
        const bool at_start = piece.begin == 0 && part.begin == 0;
        TRY(encode_piece(s, std::string_view(normalized).substr(part.begin, part.end - part.begin), at_start, ids));
      }
    }
  }
  if (add_special_tokens) ids.insert(ids.end(), s.suffix.begin(), s.suffix.end());
  return ids;
}

Expected<std::string> Tokenizer::decode(std::span<const int32_t> ids, bool skip_special_tokens) const {
  const State& s = *state_;
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (const int32_t id : ids) {
    if (const auto it = s.added_by_id.find(id); it != s.added_by_id.end()) {
      const AddedToken& added = s.added[it->second];
      if (!(skip_special_tokens && added.special)) tokens.push_back(added.content);
      continue;
    }
    const std::string* token = s.model_token(id);
    if (token == nullptr) {
      return make_error(StatusCode::kInvalidArgument, "tokenizer: id ", id, " is not a token (vocabulary size ",
                        vocab_size(), ")");
    }
    tokens.push_back(*token);
  }
  return s.decoder.apply(std::move(tokens));
}

std::optional<int32_t> Tokenizer::token_to_id(std::string_view token) const {
  if (const auto it = state_->added_by_content.find(token); it != state_->added_by_content.end()) {
    return state_->added[it->second].id;
  }
  return state_->model_id(token);
}

std::optional<std::string> Tokenizer::id_to_token(int32_t id) const {
  if (const auto it = state_->added_by_id.find(id); it != state_->added_by_id.end()) {
    return state_->added[it->second].content;
  }
  if (const std::string* token = state_->model_token(id)) return *token;
  return std::nullopt;
}

int64_t Tokenizer::vocab_size() const {
  int64_t bound = state_->model_id_bound();
  for (const AddedToken& token : state_->added) bound = std::max<int64_t>(bound, int64_t{token.id} + 1);
  return bound;
}

Expected<std::string> TokenizerStream::decode_next(int32_t id) {
  ids_.push_back(id);
  const std::span<const int32_t> all(ids_);
  TRY_ASSIGN(const std::string before, tokenizer_.decode(all.subspan(prefix_, read_ - prefix_), skip_special_));
  TRY_ASSIGN(const std::string after, tokenizer_.decode(all.subspan(prefix_), skip_special_));
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  const bool incomplete = after.size() >= kReplacement.size() &&
                          std::string_view(after).substr(after.size() - kReplacement.size()) == kReplacement;
  if (after.size() <= before.size() || incomplete) return std::string();
  prefix_ = read_;
  read_ = ids_.size();
  // Keep the history short: everything before the window is emitted and never decoded again.
  if (prefix_ > 64) {
    ids_.erase(ids_.begin(), ids_.begin() + static_cast<std::ptrdiff_t>(prefix_));
    read_ -= prefix_;
    prefix_ = 0;
  }
  return after.substr(before.size());
}

}  // namespace nxrt::genai
