// The safetensors reader (safetensors.hpp).
#include "safetensors.hpp"

#include <bit>
#include <cstring>
#include <fstream>

#include "json.hpp"

namespace qwen3 {

using tessera::UsageError;

namespace {

size_t element_size(const std::string& dtype) {
  if (dtype == "F64" || dtype == "I64" || dtype == "U64") return 8;
  if (dtype == "F32" || dtype == "I32" || dtype == "U32") return 4;
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16" || dtype == "U16") return 2;
  if (dtype == "I8" || dtype == "U8" || dtype == "BOOL" || dtype.starts_with("F8")) return 1;
  return 0;
}

template <class U>
U read_le(const std::byte* p) {
  U u;
  std::memcpy(&u, p, sizeof(U));
  static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");
  return u;
}

}  // namespace

Safetensors::Safetensors(const std::string& path) : path_(path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw UsageError(path + ": cannot open the file (does the model directory hold it?)");
  const std::streamoff size = in.tellg();
  if (size < 8) throw UsageError(path + ": too short for a safetensors file");
  bytes_.resize(static_cast<size_t>(size));
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(bytes_.data()), size))
    throw UsageError(path + ": could not read the whole file");
  const auto header_size = read_le<uint64_t>(bytes_.data());
  if (header_size > bytes_.size() - 8)
    throw UsageError(path + ": the header length " + std::to_string(header_size) +
                     " runs past the end of the file; is this a safetensors file?");
  data_start_ = 8 + static_cast<size_t>(header_size);
  const size_t data_size = bytes_.size() - data_start_;
  const json::Value header =
      json::parse(std::string_view(reinterpret_cast<const char*>(bytes_.data()) + 8, header_size),
                  path + " (header)");
  for (const auto& [name, value] : header.object(path + ": the header")) {
    if (name == "__metadata__") continue;
    const std::string what = path + ": tensor '" + name + "'";
    Entry e;
    const json::Value* dtype = value.find("dtype");
    const json::Value* shape = value.find("shape");
    const json::Value* offsets = value.find("data_offsets");
    if (!dtype || !shape || !offsets)
      throw UsageError(what + " lacks dtype, shape or data_offsets");
    e.dtype = dtype->string(what + " dtype");
    int64_t count = 1;
    for (const json::Value& d : shape->array(what + " shape")) {
      const int64_t extent = d.integer(what + " shape");
      if (extent < 0 || (extent > 0 && count > (int64_t{1} << 50) / extent))
        throw UsageError(what + ": shape extent " + std::to_string(extent) + " is out of range");
      e.shape.push_back(extent);
      count *= extent;
    }
    const json::Array& range = offsets->array(what + " data_offsets");
    if (range.size() != 2) throw UsageError(what + ": data_offsets should be [begin, end]");
    const int64_t begin = range[0].integer(what + " data_offsets");
    const int64_t end = range[1].integer(what + " data_offsets");
    if (begin < 0 || end < begin || static_cast<uint64_t>(end) > data_size)
      throw UsageError(what + ": bytes [" + std::to_string(begin) + ", " + std::to_string(end) +
                       ") lie outside the data section of " + std::to_string(data_size) + " bytes");
    e.begin = static_cast<size_t>(begin);
    e.end = static_cast<size_t>(end);
    const size_t element = element_size(e.dtype);
    if (element == 0) throw UsageError(what + ": unknown dtype '" + e.dtype + "'");
    if (e.end - e.begin != static_cast<size_t>(count) * element)
      throw UsageError(what + ": " + std::to_string(e.end - e.begin) + " bytes for " +
                       std::to_string(count) + " elements of " + e.dtype);
    entries_.emplace(name, std::move(e));
  }
}

const Safetensors::Entry& Safetensors::entry(const std::string& name) const {
  const auto it = entries_.find(name);
  if (it == entries_.end())
    throw UsageError(path_ + ": holds no tensor named '" + name + "' (" +
                     std::to_string(entries_.size()) + " tensors in the file)");
  return it->second;
}

void Safetensors::check_shape(const std::string& name, const Entry& e,
                              const std::vector<int64_t>& shape) const {
  if (shape.empty() || shape == e.shape) return;
  auto str = [](const std::vector<int64_t>& s) {
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
  };
  throw UsageError(path_ + ": tensor '" + name + "' has shape " + str(e.shape) + ", expected " +
                   str(shape) + " (does config.json match the weights?)");
}

std::vector<float> Safetensors::floats(const std::string& name,
                                       const std::vector<int64_t>& shape) const {
  const Entry& e = entry(name);
  check_shape(name, e, shape);
  const std::byte* p = data(e);
  if (e.dtype == "F32") {
    std::vector<float> out((e.end - e.begin) / 4);
    std::memcpy(out.data(), p, e.end - e.begin);
    return out;
  }
  std::vector<float> out((e.end - e.begin) / 2);
  if (e.dtype == "BF16") {
    for (size_t i = 0; i < out.size(); ++i)  // bf16 is the top half of an f32
      out[i] = std::bit_cast<float>(static_cast<uint32_t>(read_le<uint16_t>(p + 2 * i)) << 16);
    return out;
  }
  if (e.dtype == "F16") {
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = static_cast<float>(tessera::half::from_bits(read_le<uint16_t>(p + 2 * i)));
    return out;
  }
  throw UsageError(path_ + ": tensor '" + name + "' holds " + e.dtype +
                   "; the engine reads F32, F16 and BF16 weights");
}

std::vector<int32_t> Safetensors::ints(const std::string& name) const {
  const Entry& e = entry(name);
  const std::byte* p = data(e);
  std::vector<int32_t> out;
  if (e.dtype == "I32") {
    for (size_t i = 0; i < (e.end - e.begin) / 4; ++i) out.push_back(read_le<int32_t>(p + 4 * i));
  } else if (e.dtype == "I64") {
    for (size_t i = 0; i < (e.end - e.begin) / 8; ++i)
      out.push_back(static_cast<int32_t>(read_le<int64_t>(p + 8 * i)));
  } else {
    throw UsageError(path_ + ": tensor '" + name + "' holds " + e.dtype + ", not I32 or I64");
  }
  return out;
}

}  // namespace qwen3
