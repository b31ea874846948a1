// Qwen's BPE tokenizer (examples/qwen3/tokenizer.hpp) on vocabularies the tests make: the
// pre-tokenizer's pieces (each alternative of Qwen's pattern), merges lowest rank first, the
// special tokens, the tiktoken file form and its errors. The real vocabulary is compared with the
// PyPI package's encoder by scripts/qwen3_tokenizer_check.sh.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tokenizer.hpp"

namespace {

using qwen3::Tokenizer;
using Pieces = std::vector<std::string>;
using Ids = std::vector<int32_t>;

TEST(QwenPreTokenizer, WordsTakeTheirLeadingSpaceAndPunctuationIsItsOwnPiece) {
  // The package's ids for this text are those of exactly these pieces (Hello, ",", " world", ...).
  EXPECT_EQ(Tokenizer::split("Hello, world! The quick brown fox\n\n  jumps."),
            (Pieces{"Hello", ",", " world", "!", " The", " quick", " brown", " fox", "\n\n", " ",
                    " jumps", "."}));
}

TEST(QwenPreTokenizer, ContractionsInAnyCaseAreSplitOff) {
  EXPECT_EQ(Tokenizer::split("I'm don't WE'LL they've"),
            (Pieces{"I", "'m", " don", "'t", " WE", "'LL", " they", "'ve"}));
  EXPECT_EQ(Tokenizer::split("'hello"), (Pieces{"'hello"}));  // not a contraction
}

TEST(QwenPreTokenizer, EachDigitIsAPieceAndLettersOfAnyScriptAreWords) {
  EXPECT_EQ(Tokenizer::split("in 2024年 café"),
            (Pieces{"in", " ", "2", "0", "2", "4", "年", " café"}));
}

TEST(QwenPreTokenizer, WhiteSpaceEndsAtItsLastNewlineOrBeforeTheNextWord) {
  EXPECT_EQ(Tokenizer::split("a  \t b\n \nc   "), (Pieces{"a", "  \t", " b", "\n \n", "c", "   "}));
  EXPECT_EQ(Tokenizer::split("end.\n\nNext (x)"), (Pieces{"end", ".\n\n", "Next", " (", "x", ")"}));
}

// The 256 bytes in order, then merges.
Tokenizer small() {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(b));
  for (const char* t : {"he", "ll", "hell", " world"}) tokens.emplace_back(t);
  return Tokenizer::from_tokens(tokens);
}

TEST(QwenTokenizer, APieceIsMergedFromItsBytesLowestRankFirst) {
  const Tokenizer t = small();
  // h e l l o -> he l l o -> he ll o -> hell o ("hello" is no token).
  EXPECT_EQ(t.encode("hello"), (Ids{258, 'o'}));
  EXPECT_EQ(t.encode(" world"), (Ids{259}));  // a whole piece that is a token
  EXPECT_EQ(t.encode("hello world"), (Ids{258, 'o', 259}));
  EXPECT_EQ(t.decode(t.encode("hello world")), "hello world");
}

TEST(QwenTokenizer, SpecialTokensAreEncodedAsThemselves) {
  const Tokenizer t = small();
  EXPECT_EQ(t.size(), 263u);
  EXPECT_EQ(t.encode("<|im_start|>he<|im_end|><|endoftext|>"), (Ids{261, 256, 262, 260}));
  EXPECT_EQ(t.decode({261, 256}), "<|im_start|>he");
  EXPECT_THROW((void)t.decode({263}), std::out_of_range);
}

TEST(QwenTokenizer, TextThatIsNotUtf8IsRefused) {
  EXPECT_THROW((void)small().encode("ab\xC3"), std::invalid_argument);
  EXPECT_THROW((void)small().encode("\xFF"), std::invalid_argument);
}

TEST(QwenTokenizer, AVocabularyIsReadInTiktokensForm) {
  const std::string path = testing::TempDir() + "qwen3_vocab.tiktoken";
  {
    std::ofstream f(path);
    // "a", "b", "ab": base64 YQ==, Yg==, YWI=.
    f << "YQ== 0\nYg== 1\nYWI= 2\n";
  }
  const Tokenizer t = Tokenizer::load(path);
  EXPECT_EQ(t.encode("abba"), (Ids{2, 1, 0}));
  {
    std::ofstream f(path);
    f << "YQ== 0\nYg== 5\n";  // a rank that is not the next id
  }
  try {
    (void)Tokenizer::load(path);
    ADD_FAILURE() << "a vocabulary with a rank out of order was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
  EXPECT_THROW((void)Tokenizer::load(path), std::runtime_error);  // no such file
}

}  // namespace
