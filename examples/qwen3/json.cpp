// A recursive-descent JSON reader (json.hpp).
#include "json.hpp"

#include <cmath>
#include <cstdlib>

#include <tessera/core/error.hpp>

namespace qwen3::json {

namespace {

[[noreturn]] void kind_error(std::string_view what, const char* want) {
  throw tessera::UsageError(std::string(what) + " should be " + want + " in the JSON");
}

class Parser {
 public:
  Parser(std::string_view text, std::string_view source) : s_(text), source_(source) {}

  Value document() {
    Value v = value(0);
    space();
    if (i_ != s_.size()) fail("text after the end of the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw tessera::UsageError(std::string(source_) + ": not valid JSON at byte " +
                              std::to_string(i_) + ": " + why);
  }
  void space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  bool eat(char c) {
    space();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  bool word(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }

  Value value(int depth) {
    // Deep nesting is no model file; the bound keeps a hostile file from exhausting the stack.
    if (depth > 64) fail("nested more than 64 levels deep");
    space();
    if (i_ >= s_.size()) fail("unexpected end of the text");
    const char c = s_[i_];
    if (c == '{') return {object(depth)};
    if (c == '[') return {array(depth)};
    if (c == '"') return {string()};
    if (word("true")) return {true};
    if (word("false")) return {false};
    if (word("null")) return {nullptr};
    return {number()};
  }

  std::shared_ptr<Object> object(int depth) {
    ++i_;
    auto o = std::make_shared<Object>();
    if (eat('}')) return o;
    do {
      space();
      if (i_ >= s_.size() || s_[i_] != '"') fail("expected a key in quotes");
      std::string key = string();
      expect(':');
      (*o)[std::move(key)] = value(depth + 1);
    } while (eat(','));
    expect('}');
    return o;
  }

  std::shared_ptr<Array> array(int depth) {
    ++i_;
    auto a = std::make_shared<Array>();
    if (eat(']')) return a;
    do a->push_back(value(depth + 1));
    while (eat(','));
    expect(']');
    return a;
  }

  unsigned hex4() {
    if (i_ + 4 > s_.size()) fail("a \\u escape needs four hex digits");
    unsigned u = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = s_[i_++];
      u <<= 4;
      if (h >= '0' && h <= '9')
        u |= static_cast<unsigned>(h - '0');
      else if (h >= 'a' && h <= 'f')
        u |= static_cast<unsigned>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F')
        u |= static_cast<unsigned>(h - 'A' + 10);
      else
        fail("a \\u escape needs four hex digits");
    }
    return u;
  }

  static void utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  std::string string() {
    ++i_;  // the opening quote
    std::string out;
    while (true) {
      if (i_ >= s_.size()) fail("a string is not closed");
      const char c = s_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("a control character inside a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) fail("a string is not closed");
      switch (s_[i_++]) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00 && word("\\u")) {  // a surrogate pair
            const unsigned lo = hex4();
            if (lo < 0xDC00 || lo >= 0xE000) fail("a high surrogate without its low half");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          utf8(out, cp);
          break;
        }
        default:
          fail("an unknown escape in a string");
      }
    }
  }

  double number() {
    const size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    while (i_ < s_.size() &&
           std::string_view("0123456789.eE+-").find(s_[i_]) != std::string_view::npos)
      ++i_;
    if (i_ == start) fail("expected a value");
    const std::string digits(s_.substr(start, i_ - start));
    char* end = nullptr;
    const double d = std::strtod(digits.c_str(), &end);
    if (end != digits.c_str() + digits.size()) fail("'" + digits + "' is not a number");
    return d;
  }

  std::string_view s_;
  std::string_view source_;
  size_t i_ = 0;
};

}  // namespace

bool Value::boolean(std::string_view what) const {
  if (const bool* b = std::get_if<bool>(&v)) return *b;
  kind_error(what, "true or false");
}
double Value::number(std::string_view what) const {
  if (const double* d = std::get_if<double>(&v)) return *d;
  kind_error(what, "a number");
}
int64_t Value::integer(std::string_view what) const {
  const double d = number(what);
  if (d != std::floor(d) || std::fabs(d) > 9.0e15) kind_error(what, "a whole number");
  return static_cast<int64_t>(d);
}
const std::string& Value::string(std::string_view what) const {
  if (const std::string* s = std::get_if<std::string>(&v)) return *s;
  kind_error(what, "a string");
}
const Array& Value::array(std::string_view what) const {
  if (const auto* a = std::get_if<std::shared_ptr<Array>>(&v)) return **a;
  kind_error(what, "an array");
}
const Object& Value::object(std::string_view what) const {
  if (const auto* o = std::get_if<std::shared_ptr<Object>>(&v)) return **o;
  kind_error(what, "an object");
}
const Value* Value::find(std::string_view key) const {
  const auto* o = std::get_if<std::shared_ptr<Object>>(&v);
  if (!o) return nullptr;
  const auto it = (*o)->find(key);
  return it == (*o)->end() ? nullptr : &it->second;
}

Value parse(std::string_view text, std::string_view source) {
  return Parser(text, source).document();
}

}  // namespace qwen3::json
