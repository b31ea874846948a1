// Qwen's byte-level BPE (tokenizer.hpp).
#include "tokenizer.hpp"

#include <fstream>
#include <limits>
#include <stdexcept>

#include "unicode_classes.hpp"

namespace qwen3 {

namespace {

// The special tokens Qwen numbers right after its merged tokens.
constexpr const char* kSpecials[] = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bool decode_base64(std::string_view in, std::string& out) {
  out.clear();
  uint32_t bits = 0;
  int held = 0;
  for (char c : in) {
    if (c == '=') break;
    const int v = base64_value(c);
    if (v < 0) return false;
    bits = (bits << 6) | static_cast<uint32_t>(v);
    held += 6;
    if (held >= 8) {
      held -= 8;
      out.push_back(static_cast<char>((bits >> held) & 0xFF));
    }
  }
  return !out.empty();
}

// The text as code points, each with its byte offset (one more entry: the end).
struct Decoded {
  std::vector<char32_t> cps;
  std::vector<size_t> at;
};

Decoded decode_utf8(std::string_view s) {
  Decoded d;
  size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    const int n = b < 0x80           ? 1
                  : (b >> 5) == 0x6  ? 2
                  : (b >> 4) == 0xE  ? 3
                  : (b >> 3) == 0x1E ? 4
                                     : 0;
    if (n == 0 || i + n > s.size())
      throw std::invalid_argument("qwen3 tokenizer: the text is not valid UTF-8 (byte " +
                                  std::to_string(i) + ")");
    char32_t c = n == 1 ? b : b & (0x7F >> n);
    for (int k = 1; k < n; ++k) {
      const auto cont = static_cast<unsigned char>(s[i + k]);
      if ((cont >> 6) != 0x2)
        throw std::invalid_argument("qwen3 tokenizer: the text is not valid UTF-8 (byte " +
                                    std::to_string(i + k) + ")");
      c = (c << 6) | (cont & 0x3F);
    }
    d.cps.push_back(c);
    d.at.push_back(i);
    i += static_cast<size_t>(n);
  }
  d.at.push_back(s.size());
  return d;
}

bool is_newline(char32_t c) {
  return c == '\r' || c == '\n';
}
// [^\s\p{L}\p{N}]: punctuation, symbols, marks, controls that are not white space.
bool is_other(char32_t c) {
  return !is_space(c) && !is_letter(c) && !is_number(c);
}
char32_t lower_ascii(char32_t c) {
  return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

// The length in code points of the pre-tokenizer's match at i (always at least 1), taking its
// pattern's alternatives in order, as the backtracking regex does:
//   (?i:'s|'t|'re|'ve|'m|'ll|'d) | [^\r\n\p{L}\p{N}]?\p{L}+ | \p{N} | ?[^\s\p{L}\p{N}]+[\r\n]* |
//   \s*[\r\n]+ | \s+(?!\S) | \s+
size_t match_at(const std::vector<char32_t>& c, size_t i) {
  const size_t n = c.size();
  auto at = [&](size_t k) -> char32_t { return k < n ? c[k] : 0; };
  if (c[i] == '\'') {
    const char32_t a = lower_ascii(at(i + 1)), b = lower_ascii(at(i + 2));
    if (i + 1 < n && (a == 's' || a == 0x17F || a == 't' || a == 'm' || a == 'd')) return 2;
    if (i + 2 < n && ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')))
      return 3;
  }
  {
    size_t k = i;
    if (!is_newline(c[k]) && !is_letter(c[k]) && !is_number(c[k]) && k + 1 < n &&
        is_letter(c[k + 1]))
      ++k;
    if (is_letter(c[k])) {
      while (k < n && is_letter(c[k])) ++k;
      return k - i;
    }
  }
  if (is_number(c[i])) return 1;
  {
    size_t k = i;
    if (c[k] == ' ' && k + 1 < n && is_other(c[k + 1])) ++k;
    if (is_other(c[k])) {
      while (k < n && is_other(c[k])) ++k;
      while (k < n && is_newline(c[k])) ++k;
      return k - i;
    }
  }
  // White space from here on: its run [i, end).
  size_t end = i;
  while (end < n && is_space(c[end])) ++end;
  for (size_t k = end; k-- > i;)  // \s*[\r\n]+: up to the run's last newline
    if (is_newline(c[k])) return k + 1 - i;
  if (end == n) return end - i;         // \s+(?!\S) at the end of the text
  if (end - i > 1) return end - 1 - i;  // \s+(?!\S): all but the space before the next word
  return 1;                             // \s+
}

}  // namespace

std::vector<std::string> Tokenizer::split(std::string_view text) {
  const Decoded d = decode_utf8(text);
  std::vector<std::string> pieces;
  for (size_t i = 0; i < d.cps.size();) {
    const size_t len = match_at(d.cps, i);
    pieces.emplace_back(text.substr(d.at[i], d.at[i + len] - d.at[i]));
    i += len;
  }
  return pieces;
}

Tokenizer Tokenizer::from_tokens(std::vector<std::string> tokens) {
  Tokenizer t;
  t.tokens_ = std::move(tokens);
  for (size_t id = 0; id < t.tokens_.size(); ++id)
    t.ranks_.emplace(t.tokens_[id], static_cast<int32_t>(id));
  for (const char* s : kSpecials)
    t.specials_.emplace_back(s, static_cast<int32_t>(t.tokens_.size() + t.specials_.size()));
  return t;
}

Tokenizer Tokenizer::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("qwen3 tokenizer: cannot open the vocabulary '" + path + "'");
  std::vector<std::string> tokens;
  std::string line, bytes;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const size_t space = line.find(' ');
    const std::string rank = space == std::string::npos ? "" : line.substr(space + 1);
    if (rank.empty() || !decode_base64(std::string_view(line).substr(0, space), bytes) ||
        rank != std::to_string(tokens.size()))
      throw std::runtime_error("qwen3 tokenizer: line " + std::to_string(number) + " of '" + path +
                               "' is not \"<base64 bytes> " + std::to_string(tokens.size()) +
                               "\" (a tiktoken vocabulary, ranks in order)");
    tokens.push_back(bytes);
  }
  if (tokens.empty()) throw std::runtime_error("qwen3 tokenizer: '" + path + "' holds no tokens");
  return from_tokens(std::move(tokens));
}

// tiktoken's merge: start from the piece's bytes and merge, again and again, the adjacent pair
// whose concatenation has the lowest rank, until no pair is a token.
void Tokenizer::encode_piece(std::string_view piece, std::vector<int32_t>& out) const {
  if (auto whole = ranks_.find(std::string(piece)); whole != ranks_.end())
    return out.push_back(whole->second);
  std::vector<size_t> starts;  // the parts' byte offsets, and the end
  for (size_t i = 0; i <= piece.size(); ++i) starts.push_back(i);
  constexpr int32_t kNone = std::numeric_limits<int32_t>::max();
  auto rank_of = [&](size_t p) {  // of parts p and p + 1, merged
    if (p + 2 >= starts.size()) return kNone;
    auto it = ranks_.find(std::string(piece.substr(starts[p], starts[p + 2] - starts[p])));
    return it == ranks_.end() ? kNone : it->second;
  };
  for (;;) {
    int32_t best = kNone;
    size_t at = 0;
    for (size_t p = 0; p + 2 < starts.size(); ++p)
      if (const int32_t r = rank_of(p); r < best) {
        best = r;
        at = p;
      }
    if (best == kNone) break;
    starts.erase(starts.begin() + static_cast<std::ptrdiff_t>(at) + 1);
  }
  for (size_t p = 0; p + 1 < starts.size(); ++p) {
    auto it = ranks_.find(std::string(piece.substr(starts[p], starts[p + 1] - starts[p])));
    if (it == ranks_.end())
      throw std::invalid_argument(
          "qwen3 tokenizer: the vocabulary has no token for a byte of the text; it is not a "
          "byte-level BPE vocabulary");
    out.push_back(it->second);
  }
}

std::vector<int32_t> Tokenizer::encode(std::string_view text) const {
  std::vector<int32_t> ids;
  while (!text.empty()) {
    // The earliest special token in the text ends the ordinary text before it.
    size_t cut = text.size(), len = 0;
    int32_t special = -1;
    for (const auto& [s, id] : specials_)
      if (const size_t p = text.find(s); p < cut) {
        cut = p;
        len = s.size();
        special = id;
      }
    for (const std::string& piece : split(text.substr(0, cut))) encode_piece(piece, ids);
    if (special < 0) break;
    ids.push_back(special);
    text.remove_prefix(cut + len);
  }
  return ids;
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string out;
  for (int32_t id : ids) {
    if (id >= 0 && static_cast<size_t>(id) < tokens_.size()) {
      out += tokens_[static_cast<size_t>(id)];
      continue;
    }
    const size_t s = static_cast<size_t>(id) - tokens_.size();
    if (id < 0 || s >= specials_.size())
      throw std::out_of_range("qwen3 tokenizer: token id " + std::to_string(id) +
                              " is outside the vocabulary of " + std::to_string(size()));
    out += specials_[s].first;
  }
  return out;
}

}  // namespace qwen3
