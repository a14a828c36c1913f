// Chat-template parsing: the source split into text and tags with Jinja2's whitespace rules (trim_blocks,
// lstrip_blocks, '-' and '+' markers), then a recursive-descent parser over the tags (grammar in template.h; the
// operator precedence is Jinja2's: or, and, not, comparisons, + -, ~, * / // %, unary, filters, postfix).
#include <cctype>
#include <charconv>

#include "genai/template_ast.h"
#include "genai/template_builtins.h"

namespace nxrt::genai {

namespace {

using Expr = TemplateExpr;
using ExprPtr = std::unique_ptr<TemplateExpr>;

// Deepest nesting of expressions, and of statement blocks, that a template may use.
constexpr int kMaxNesting = 100;

struct Segment {
  enum class Kind { kText, kExpr, kStmt, kComment } kind = Kind::kText;
  std::string content;
  int line = 1;
  bool strip_left = false, strip_right = false, keep_left = false;
};

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Splits the source into text and tags; the tags' whitespace markers are applied to the neighbouring text.
Expected<std::vector<Segment>> split_segments(std::string_view source) {
  std::vector<Segment> segments;
  size_t pos = 0;
  int line = 1;
  const auto count_lines = [&](std::string_view s) {
    for (const char c : s) line += c == '\n';
  };
  while (pos < source.size()) {
    size_t open = source.find('{', pos);
    while (open != std::string_view::npos && open + 1 < source.size() && source[open + 1] != '{' &&
           source[open + 1] != '%' && source[open + 1] != '#') {
      open = source.find('{', open + 1);
    }
    if (open == std::string_view::npos || open + 1 >= source.size()) open = source.size();
    if (open > pos) {
      segments.push_back({Segment::Kind::kText, std::string(source.substr(pos, open - pos)), line});
      count_lines(source.substr(pos, open - pos));
    }
    if (open >= source.size()) break;
    Segment tag;
    tag.line = line;
    const char kind = source[open + 1];
    tag.kind = kind == '{' ? Segment::Kind::kExpr : kind == '%' ? Segment::Kind::kStmt : Segment::Kind::kComment;
    const std::string_view close = kind == '{' ? "}}" : kind == '%' ? "%}" : "#}";
    size_t at = open + 2;
    if (at < source.size() && (source[at] == '-' || source[at] == '+')) {
      (source[at] == '-' ? tag.strip_left : tag.keep_left) = true;
      ++at;
    }
    // The closing marker, outside string literals (comments have none).
    size_t end = at;
    char quote = 0;
    for (; end + 1 < source.size(); ++end) {
      const char c = source[end];
      if (quote != 0) {
        if (c == '\\') {
          ++end;
        } else if (c == quote) {
          quote = 0;
        }
      } else if (tag.kind != Segment::Kind::kComment && (c == '\'' || c == '"')) {
        quote = c;
      } else if (source.substr(end, 2) == close) {
        break;
      }
    }
    if (end + 1 >= source.size()) return template_error(tag.line, std::string("unclosed '{") + kind + "'");
    size_t content_end = end;
    if (content_end > at && source[content_end - 1] == '-') {
      tag.strip_right = true;
      --content_end;
    }
    tag.content = std::string(source.substr(at, content_end - at));
    count_lines(source.substr(open, end + 2 - open));
    segments.push_back(std::move(tag));
    pos = end + 2;
  }
  // Whitespace rules on the text around each tag.
  for (size_t i = 0; i < segments.size(); ++i) {
    Segment& tag = segments[i];
    if (tag.kind == Segment::Kind::kText) continue;
    const bool block = tag.kind != Segment::Kind::kExpr;
    Segment* before = i > 0 && segments[i - 1].kind == Segment::Kind::kText ? &segments[i - 1] : nullptr;
    Segment* after = i + 1 < segments.size() && segments[i + 1].kind == Segment::Kind::kText ? &segments[i + 1]
                                                                                              : nullptr;
    if (before != nullptr) {
      std::string& text = before->content;
      if (tag.strip_left) {
        while (!text.empty() && is_blank(text.back())) text.pop_back();
      } else if (block && !tag.keep_left) {  // lstrip_blocks: spaces and tabs from the line start
        size_t cut = text.size();
        while (cut > 0 && (text[cut - 1] == ' ' || text[cut - 1] == '\t')) --cut;
        if (cut == 0 ? i == 1 : text[cut - 1] == '\n') text.resize(cut);
      }
    }
    if (after != nullptr) {
      std::string& text = after->content;
      if (tag.strip_right) {
        size_t cut = 0;
        while (cut < text.size() && is_blank(text[cut])) ++cut;
        text.erase(0, cut);
      } else if (block && !text.empty() && text[0] == '\n') {  // trim_blocks: the first newline
        text.erase(0, 1);
      } else if (block && text.size() >= 2 && text[0] == '\r' && text[1] == '\n') {
        text.erase(0, 2);
      }
    }
  }
  return segments;
}

struct Token {
  enum class Kind { kName, kString, kInt, kFloat, kOperator, kEnd } kind = Kind::kEnd;
  std::string text;
  TemplateValue value;
};

Expected<std::vector<Token>> tokenize(const std::string& s, int line) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (is_blank(c)) {
      ++i;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      tokens.push_back({Token::Kind::kName, s.substr(i, j - i), {}});
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      bool is_float = false;
      while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      if (j + 1 < s.size() && s[j] == '.' && std::isdigit(static_cast<unsigned char>(s[j + 1]))) {
        is_float = true;
        for (++j; j < s.size() && std::isdigit(static_cast<unsigned char>(s[j])); ++j) {
        }
      }
      if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {  // an exponent
        size_t k = j + 1;
        if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
        if (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) {
          is_float = true;
          for (j = k; j < s.size() && std::isdigit(static_cast<unsigned char>(s[j])); ++j) {
          }
        }
      }
      std::string digits;
      for (size_t k = i; k < j; ++k) {
        if (s[k] != '_') digits += s[k];
      }
      Token t{is_float ? Token::Kind::kFloat : Token::Kind::kInt, digits, {}};
      if (is_float) {
        double v = 0;
        std::from_chars(digits.data(), digits.data() + digits.size(), v);
        t.value = TemplateValue::floating(v);
      } else {
        int64_t v = 0;
        if (std::from_chars(digits.data(), digits.data() + digits.size(), v).ec != std::errc()) {
          return template_error(line, "integer literal out of range");
        }
        t.value = TemplateValue::integer(v);
      }
      tokens.push_back(std::move(t));
      i = j;
    } else if (c == '\'' || c == '"') {
      std::string text;
      size_t j = i + 1;
      for (; j < s.size() && s[j] != c; ++j) {
        if (s[j] == '\\' && j + 1 < s.size()) {
          const char e = s[++j];
          text += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == '0' ? '\0' : e;
        } else {
          text += s[j];
        }
      }
      if (j >= s.size()) return template_error(line, "unterminated string literal");
      tokens.push_back({Token::Kind::kString, "", TemplateValue::string(std::move(text))});
      i = j + 1;
    } else {
      static const char* const kTwo[] = {"==", "!=", "<=", ">=", "//", "**"};
      std::string op(1, c);
      for (const char* two : kTwo) {
        if (s.compare(i, 2, two) == 0) op = two;
      }
      if (std::string_view("+-*/%~<>()[]{}.,:|=!").find(c) == std::string_view::npos || op == "!") {
        return template_error(line, std::string("unexpected character '") + c + "'");
      }
      tokens.push_back({Token::Kind::kOperator, op, {}});
      i += op.size();
    }
  }
  tokens.push_back({Token::Kind::kEnd, "", {}});
  return tokens;
}

// A vector of the given expressions (an initializer list cannot move unique pointers).
template <class... Parts>
std::vector<ExprPtr> parts_of(Parts... parts) {
  std::vector<ExprPtr> out;
  (out.push_back(std::move(parts)), ...);
  return out;
}

class ExprParser {
 public:
  ExprParser(std::vector<Token> tokens, int line) : tokens_(std::move(tokens)), line_(line) {}

  const Token& peek(size_t ahead = 0) const { return tokens_[std::min(at_ + ahead, tokens_.size() - 1)]; }
  bool at_end() const { return peek().kind == Token::Kind::kEnd; }
  bool is(std::string_view text, size_t ahead = 0) const {
    const Token& t = peek(ahead);
    return (t.kind == Token::Kind::kOperator || t.kind == Token::Kind::kName) && t.text == text;
  }
  bool accept(std::string_view text) {
    if (!is(text)) return false;
    ++at_;
    return true;
  }
  Status expect(std::string_view text) {
    if (accept(text)) return Status::ok();
    return error("expected '" + std::string(text) + "'");
  }
  Expected<std::string> name() {
    if (peek().kind != Token::Kind::kName) return error("expected a name");
    return tokens_[at_++].text;
  }
  Status error(const std::string& what) const {
    const Token& t = peek();
    return template_error(line_, what + (t.kind == Token::Kind::kEnd ? " at the end of the tag" : " near '" + t.text + "'"));
  }

  Expected<ExprPtr> expression() {
    // Nesting (parentheses, brackets, calls) recurses through here; a bound keeps hostile input off the stack.
    if (++depth_ > kMaxNesting) return error("expressions nested deeper than " + std::to_string(kMaxNesting));
    struct Leave {
      int& depth;
      ~Leave() { --depth; }
    } leave{depth_};
    TRY_ASSIGN(ExprPtr value, or_expr());
    if (!accept("if")) return value;
    TRY_ASSIGN(ExprPtr condition, or_expr());
    ExprPtr otherwise;
    if (accept("else")) {
      TRY_ASSIGN(otherwise, expression());
    }
    return make(Expr::Kind::kConditional, parts_of(std::move(value), std::move(condition), std::move(otherwise)));
  }

  // An expression without a trailing conditional (a for loop's iterable, before its own 'if').
  Expected<ExprPtr> or_expr() {
    TRY_ASSIGN(ExprPtr left, and_expr());
    while (accept("or")) {
      TRY_ASSIGN(ExprPtr right, and_expr());
      left = make(Expr::Kind::kOr, parts_of(std::move(left), std::move(right)));
    }
    return left;
  }

 private:
  ExprPtr make(Expr::Kind kind, std::vector<ExprPtr> args, std::string name = "") const {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = line_;
    e->args = std::move(args);
    e->name = std::move(name);
    return e;
  }

  Expected<ExprPtr> and_expr() {
    TRY_ASSIGN(ExprPtr left, not_expr());
    while (accept("and")) {
      TRY_ASSIGN(ExprPtr right, not_expr());
      left = make(Expr::Kind::kAnd, parts_of(std::move(left), std::move(right)));
    }
    return left;
  }

  Expected<ExprPtr> not_expr() {
    if (is("not") && !is("in", 1)) {
      ++at_;
      if (++depth_ > kMaxNesting) return error("expressions nested deeper than " + std::to_string(kMaxNesting));
      auto operand_or = not_expr();
      --depth_;
      TRY_ASSIGN(ExprPtr operand, std::move(operand_or));
      return make(Expr::Kind::kNot, parts_of(std::move(operand)));
    }
    return comparison();
  }

  Expected<ExprPtr> comparison() {
    TRY_ASSIGN(ExprPtr left, additive());
    while (true) {
      std::string op;
      for (const char* candidate : {"==", "!=", "<=", ">=", "<", ">", "in"}) {
        if (is(candidate)) op = candidate;
      }
      if (op.empty() && is("not") && is("in", 1)) {
        at_ += 2;
        TRY_ASSIGN(ExprPtr right, additive());
        left = make(Expr::Kind::kNot, parts_of(make(Expr::Kind::kBinary, parts_of(std::move(left), std::move(right)), "in")));
        continue;
      }
      if (!op.empty()) {
        ++at_;
        TRY_ASSIGN(ExprPtr right, additive());
        left = make(Expr::Kind::kBinary, parts_of(std::move(left), std::move(right)), op);
        continue;
      }
      if (accept("is")) {
        const bool negated = accept("not");
        TRY_ASSIGN(std::string test, name());
        std::vector<ExprPtr> args;
        args.push_back(std::move(left));
        if (accept("(")) {
          TRY(arguments(args, nullptr));
        } else if (!at_end() && (peek().kind == Token::Kind::kInt || peek().kind == Token::Kind::kString ||
                                 peek().kind == Token::Kind::kFloat)) {
          TRY_ASSIGN(ExprPtr argument, primary());
          args.push_back(std::move(argument));
        }
        left = make(Expr::Kind::kTest, std::move(args), test);
        left->negated = negated;
        continue;
      }
      return left;
    }
  }

  Expected<ExprPtr> additive() {
    TRY_ASSIGN(ExprPtr left, concatenation());
    while (is("+") || is("-")) {
      const std::string op = tokens_[at_++].text;
      TRY_ASSIGN(ExprPtr right, concatenation());
      left = make(Expr::Kind::kBinary, parts_of(std::move(left), std::move(right)), op);
    }
    return left;
  }

  Expected<ExprPtr> concatenation() {
    TRY_ASSIGN(ExprPtr left, multiplicative());
    while (accept("~")) {
      TRY_ASSIGN(ExprPtr right, multiplicative());
      left = make(Expr::Kind::kBinary, parts_of(std::move(left), std::move(right)), "~");
    }
    return left;
  }

  Expected<ExprPtr> multiplicative() {
    TRY_ASSIGN(ExprPtr left, unary());
    while (is("*") || is("/") || is("//") || is("%")) {
      const std::string op = tokens_[at_++].text;
      TRY_ASSIGN(ExprPtr right, unary());
      left = make(Expr::Kind::kBinary, parts_of(std::move(left), std::move(right)), op);
    }
    return left;
  }

  Expected<ExprPtr> unary() {
    if (is("-") || is("+")) {
      const bool negate = is("-");
      ++at_;
      if (++depth_ > kMaxNesting) return error("expressions nested deeper than " + std::to_string(kMaxNesting));
      auto operand_or = unary();
      --depth_;
      TRY_ASSIGN(ExprPtr operand, std::move(operand_or));
      return negate ? make(Expr::Kind::kNegate, parts_of(std::move(operand))) : std::move(operand);
    }
    TRY_ASSIGN(ExprPtr value, postfix());
    while (accept("|")) {
      TRY_ASSIGN(std::string filter, name());
      std::vector<ExprPtr> args;
      args.push_back(std::move(value));
      std::vector<std::string> keywords;
      if (accept("(")) TRY(arguments(args, &keywords));
      value = make(Expr::Kind::kFilter, std::move(args), filter);
      value->keywords = std::move(keywords);
    }
    return value;
  }

  Expected<ExprPtr> postfix() {
    TRY_ASSIGN(ExprPtr value, primary());
    while (true) {
      if (accept(".")) {
        TRY_ASSIGN(std::string attribute, name());
        value = make(Expr::Kind::kAttribute, parts_of(std::move(value)), attribute);
      } else if (accept("[")) {
        std::vector<ExprPtr> parts;
        parts.push_back(std::move(value));
        bool slice = false;
        for (int part = 0; part < 3; ++part) {
          ExprPtr item;
          if (!is(":") && !is("]")) {
            TRY_ASSIGN(item, expression());
          }
          parts.push_back(std::move(item));
          if (!accept(":")) break;
          slice = true;
        }
        TRY(expect("]"));
        if (!slice && parts[1] == nullptr) return error("an empty subscript");
        while (slice && parts.size() < 4) parts.emplace_back();
        value = make(slice ? Expr::Kind::kSlice : Expr::Kind::kIndex, std::move(parts));
      } else if (accept("(")) {
        std::vector<ExprPtr> args;
        args.push_back(std::move(value));
        std::vector<std::string> keywords;
        TRY(arguments(args, &keywords));
        value = make(Expr::Kind::kCall, std::move(args));
        value->keywords = std::move(keywords);
      } else {
        return value;
      }
    }
  }

  // Arguments after '(' up to ')': positional ones, then `name=value` ones when `keywords` is given.
  Status arguments(std::vector<ExprPtr>& args, std::vector<std::string>* keywords) {
    while (!accept(")")) {
      if (keywords != nullptr && peek().kind == Token::Kind::kName && is("=", 1)) {
        keywords->push_back(tokens_[at_].text);
        at_ += 2;
      } else if (keywords != nullptr && !keywords->empty()) {
        return error("a positional argument after keyword arguments");
      }
      TRY_ASSIGN(ExprPtr argument, expression());
      args.push_back(std::move(argument));
      if (!accept(",")) {
        TRY(expect(")"));
        break;
      }
    }
    return Status::ok();
  }

  Expected<ExprPtr> primary() {
    const Token& t = peek();
    if (t.kind == Token::Kind::kString) {
      std::string text = t.value.as_string();
      ++at_;
      while (peek().kind == Token::Kind::kString) text += tokens_[at_++].value.as_string();  // adjacent literals
      auto e = make(Expr::Kind::kLiteral, {});
      e->value = TemplateValue::string(std::move(text));
      return e;
    }
    if (t.kind == Token::Kind::kInt || t.kind == Token::Kind::kFloat) {
      auto e = make(Expr::Kind::kLiteral, {});
      e->value = t.value;
      ++at_;
      return e;
    }
    if (t.kind == Token::Kind::kName) {
      const std::string word = t.text;
      ++at_;
      auto e = make(Expr::Kind::kLiteral, {});
      if (word == "true" || word == "True") {
        e->value = TemplateValue::boolean(true);
      } else if (word == "false" || word == "False") {
        e->value = TemplateValue::boolean(false);
      } else if (word == "none" || word == "None") {
        e->value = TemplateValue::none();
      } else {
        e->kind = Expr::Kind::kName;
        e->name = word;
      }
      return e;
    }
    if (accept("(")) {  // a parenthesized expression, or a tuple (a list here)
      TRY_ASSIGN(ExprPtr inner, expression());
      if (accept(")")) return inner;
      std::vector<ExprPtr> items;
      items.push_back(std::move(inner));
      while (accept(",")) {
        if (is(")")) break;
        TRY_ASSIGN(ExprPtr item, expression());
        items.push_back(std::move(item));
      }
      TRY(expect(")"));
      return make(Expr::Kind::kList, std::move(items));
    }
    if (accept("[")) {
      std::vector<ExprPtr> items;
      while (!accept("]")) {
        TRY_ASSIGN(ExprPtr item, expression());
        items.push_back(std::move(item));
        if (!accept(",")) {
          TRY(expect("]"));
          break;
        }
      }
      return make(Expr::Kind::kList, std::move(items));
    }
    if (accept("{")) {
      std::vector<ExprPtr> items;
      while (!accept("}")) {
        TRY_ASSIGN(ExprPtr key, expression());
        TRY(expect(":"));
        TRY_ASSIGN(ExprPtr value, expression());
        items.push_back(std::move(key));
        items.push_back(std::move(value));
        if (!accept(",")) {
          TRY(expect("}"));
          break;
        }
      }
      return make(Expr::Kind::kDict, std::move(items));
    }
    return error("expected an expression");
  }

  std::vector<Token> tokens_;
  size_t at_ = 0;
  int line_;
  int depth_ = 0;
};

class StatementParser {
 public:
  explicit StatementParser(std::vector<Segment> segments) : segments_(std::move(segments)) {}

  Expected<TemplateBody> document() {
    TRY_ASSIGN(TemplateBody body, block({}));
    if (at_ < segments_.size()) return template_error(segments_[at_].line, "'" + end_word_ + "' without its block");
    return body;
  }

 private:
  // Statements up to a tag whose first word is one of `ends` (left unconsumed, its word in end_word_).
  Expected<TemplateBody> block(const std::vector<std::string>& ends) {
    if (ends.size() > 0 && ++depth_ > kMaxNesting) {
      return template_error(at_ < segments_.size() ? segments_[at_].line : 1,
                          "blocks nested deeper than " + std::to_string(kMaxNesting));
    }
    struct Leave {
      int& depth;
      bool nested;
      ~Leave() {
        if (nested) --depth;
      }
    } leave{depth_, !ends.empty()};
    TemplateBody body;
    while (at_ < segments_.size()) {
      const Segment& segment = segments_[at_];
      auto stmt = std::make_unique<TemplateStmt>();
      stmt->line = segment.line;
      if (segment.kind == Segment::Kind::kComment) {
        ++at_;
        continue;
      }
      if (segment.kind == Segment::Kind::kText) {
        stmt->text = segment.content;
        ++at_;
        if (!stmt->text.empty()) body.push_back(std::move(stmt));
        continue;
      }
      TRY_ASSIGN(std::vector<Token> tokens, tokenize(segment.content, segment.line));
      ExprParser p(std::move(tokens), segment.line);
      if (segment.kind == Segment::Kind::kExpr) {
        stmt->kind = TemplateStmt::Kind::kOutput;
        TRY_ASSIGN(stmt->expr, p.expression());
        if (!p.at_end()) return p.error("unexpected text after the expression");
        ++at_;
        body.push_back(std::move(stmt));
        continue;
      }
      TRY_ASSIGN(const std::string word, p.name());
      end_word_ = word;
      for (const std::string& end : ends) {
        if (word == end) return body;
      }
      ++at_;
      if (word == "if") {
        TRY(parse_if(p, *stmt));
      } else if (word == "for") {
        TRY(parse_for(p, *stmt));
      } else if (word == "set") {
        stmt->kind = TemplateStmt::Kind::kSet;
        TRY_ASSIGN(std::string target, p.name());
        stmt->targets.push_back(target);
        if (p.accept(".")) {
          TRY_ASSIGN(std::string attribute, p.name());
          stmt->targets.push_back(attribute);
        }
        TRY(p.expect("="));
        TRY_ASSIGN(stmt->expr, p.expression());
      } else if (word == "break" || word == "continue") {
        stmt->kind = word == "break" ? TemplateStmt::Kind::kBreak : TemplateStmt::Kind::kContinue;
      } else {
        return make_error(StatusCode::kNotImplemented, "chat template line ", segment.line, ": '{% ", word,
                          " %}' is not supported");
      }
      if (!p.at_end()) return p.error("unexpected text in the tag");
      body.push_back(std::move(stmt));
    }
    if (!ends.empty()) {
      return template_error(segments_.empty() ? 1 : segments_.back().line, "missing '{% " + ends.back() + " %}'");
    }
    return body;
  }

  // The rest of the current tag must be empty; consumes it.
  Status end_tag(ExprParser& p) {
    if (!p.at_end()) return p.error("unexpected text in the tag");
    ++at_;
    return Status::ok();
  }

  Status parse_if(ExprParser& p, TemplateStmt& stmt) {
    stmt.kind = TemplateStmt::Kind::kIf;
    TRY_ASSIGN(ExprPtr condition, p.expression());
    stmt.conditions.push_back(std::move(condition));
    if (!p.at_end()) return p.error("unexpected text in the tag");
    while (true) {
      TRY_ASSIGN(TemplateBody body, block({"elif", "else", "endif"}));
      stmt.bodies.push_back(std::move(body));
      TRY_ASSIGN(std::vector<Token> tokens, tokenize(segments_[at_].content, segments_[at_].line));
      ExprParser tag(std::move(tokens), segments_[at_].line);
      const std::string word = *tag.name();
      if (word == "elif") {
        TRY_ASSIGN(ExprPtr next, tag.expression());
        stmt.conditions.push_back(std::move(next));
        TRY(end_tag(tag));
      } else if (word == "else") {
        TRY(end_tag(tag));
        TRY_ASSIGN(TemplateBody otherwise, block({"endif"}));
        stmt.bodies.push_back(std::move(otherwise));
        ++at_;
        return Status::ok();
      } else {
        return end_tag(tag);
      }
    }
  }

  Status parse_for(ExprParser& p, TemplateStmt& stmt) {
    stmt.kind = TemplateStmt::Kind::kFor;
    do {
      TRY_ASSIGN(std::string target, p.name());
      stmt.targets.push_back(target);
    } while (p.accept(","));
    TRY(p.expect("in"));
    TRY_ASSIGN(stmt.expr, p.or_expr());
    if (p.accept("if")) {
      TRY_ASSIGN(ExprPtr filter, p.or_expr());
      stmt.conditions.push_back(std::move(filter));
    }
    if (p.accept("recursive")) return p.error("recursive loops are not supported");
    if (!p.at_end()) return p.error("unexpected text in the tag");
    TRY_ASSIGN(TemplateBody body, block({"else", "endfor"}));
    stmt.bodies.push_back(std::move(body));
    TRY_ASSIGN(std::vector<Token> tokens, tokenize(segments_[at_].content, segments_[at_].line));
    ExprParser tag(std::move(tokens), segments_[at_].line);
    if (*tag.name() == "else") {
      TRY(end_tag(tag));
      TRY_ASSIGN(TemplateBody otherwise, block({"endfor"}));
      stmt.bodies.push_back(std::move(otherwise));
      ++at_;
      return Status::ok();
    }
    return end_tag(tag);
  }

  std::vector<Segment> segments_;
  size_t at_ = 0;
  std::string end_word_;
  int depth_ = 0;
};

}  // namespace

Expected<ChatTemplate> ChatTemplate::parse(std::string_view source) {
  TRY_ASSIGN(std::vector<Segment> segments, split_segments(source));
  StatementParser parser(std::move(segments));
  TRY_ASSIGN(TemplateBody body, parser.document());
  auto program = std::make_shared<TemplateProgram>();
  program->body = std::move(body);
  ChatTemplate t;
  t.program_ = std::move(program);
  return t;
}

}  // namespace nxrt::genai
