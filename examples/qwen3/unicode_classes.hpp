// The Unicode classes the Qwen pre-tokenizer's pattern uses (tokenizer.cpp): letters (\p{L}),
// numbers (\p{N}) and white space (\s, the White_Space property).
#pragma once

namespace qwen3 {

struct CodeRange {
  char32_t first, last;  // inclusive
};

bool is_letter(char32_t c);  // general category L*
bool is_number(char32_t c);  // general category N*
bool is_space(char32_t c);   // White_Space
// The Unicode version the letter and number tables come from.
const char* unicode_classes_version();

}  // namespace qwen3
