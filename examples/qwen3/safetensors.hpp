// Reading a .safetensors file (Hugging Face's weight format): an 8-byte little-endian header
// length, a JSON header mapping each tensor's name to its dtype, shape and byte range, then the
// raw row-major data. The whole file is read once; tensors are then converted on request, to host
// floats or straight into Tessera tensors.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <tessera/tessera.hpp>

namespace qwen3 {

class Safetensors {
 public:
  struct Entry {
    std::string dtype;  // "F32", "F16", "BF16", "I32", ... as the file says
    std::vector<int64_t> shape;
    size_t begin = 0, end = 0;  // byte range in the data section
  };

  // Reads and checks `path`: the header is valid JSON, every tensor's byte range lies in the file
  // and holds exactly its shape's elements. Throws UsageError naming the file and what is wrong.
  explicit Safetensors(const std::string& path);

  bool contains(const std::string& name) const { return entries_.count(name) != 0; }
  // Throws UsageError naming the file and the tensor when it is absent.
  const Entry& entry(const std::string& name) const;
  const std::map<std::string, Entry>& entries() const { return entries_; }
  // The tensor's elements widened to float (F32, F16, BF16); throws for other dtypes and when the
  // shape is not `shape` (empty: any).
  std::vector<float> floats(const std::string& name, const std::vector<int64_t>& shape = {}) const;
  // The same for integer tensors (I32, I64), as int32_t.
  std::vector<int32_t> ints(const std::string& name) const;

  // The tensor as a Tessera tensor of element T and rank R on `device` (each value rounded to T
  // once).
  template <tessera::Element T, int R>
  tessera::Tensor<T, R> load(const std::string& name,
                             tessera::Device device = tessera::default_device()) const {
    const Entry& e = entry(name);
    if (static_cast<int>(e.shape.size()) != R)
      throw tessera::UsageError(path_ + ": tensor '" + name + "' has rank " +
                                std::to_string(e.shape.size()) + ", not " + std::to_string(R));
    const std::vector<float> f = floats(name);
    std::vector<T> t(f.size());
    for (size_t i = 0; i < f.size(); ++i) t[i] = T(f[i]);
    int64_t shape[R];
    for (int d = 0; d < R; ++d) shape[d] = e.shape[static_cast<size_t>(d)];
    return tessera::from_host<T, static_cast<size_t>(R)>(t, shape, device);
  }

 private:
  const std::byte* data(const Entry& e) const { return bytes_.data() + data_start_ + e.begin; }
  void check_shape(const std::string& name, const Entry& e,
                   const std::vector<int64_t>& shape) const;

  std::string path_;
  std::vector<std::byte> bytes_;  // the whole file
  size_t data_start_ = 0;
  std::map<std::string, Entry> entries_;
};

}  // namespace qwen3
