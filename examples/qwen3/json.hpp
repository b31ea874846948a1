// A small JSON reader for the two files a Hugging Face model directory holds that the engine
// reads: config.json and the header of model.safetensors. Objects, arrays, strings (with \uXXXX
// escapes), numbers, true, false and null; no comments. Errors are UsageErrors naming the file
// and the byte where reading stopped.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace qwen3::json {

struct Value;
using Object = std::map<std::string, Value, std::less<>>;
using Array = std::vector<Value>;

struct Value {
  std::variant<std::nullptr_t, bool, double, std::string, std::shared_ptr<Array>,
               std::shared_ptr<Object>>
      v;

  bool is_null() const { return v.index() == 0; }
  bool is_number() const { return v.index() == 2; }
  bool is_string() const { return v.index() == 3; }
  bool is_object() const { return v.index() == 5; }
  // Each accessor throws a UsageError naming `what` (a key path, for the message) when the value
  // is of another kind.
  bool boolean(std::string_view what) const;
  double number(std::string_view what) const;
  // A number that is a whole number fitting in int64_t.
  int64_t integer(std::string_view what) const;
  const std::string& string(std::string_view what) const;
  const Array& array(std::string_view what) const;
  const Object& object(std::string_view what) const;
  // The member `key` of an object, or null when it has none.
  const Value* find(std::string_view key) const;
};

// Parses `text` (all of it: trailing non-space is an error); `source` names it in errors.
Value parse(std::string_view text, std::string_view source);

}  // namespace qwen3::json
