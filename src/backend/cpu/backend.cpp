#include "tessera/backend/cpu/backend.hpp"

namespace tessera::backend::cpu {

namespace {
class CpuBackend final : public Backend {
 public:
  std::string_view name() const override { return "cpu"; }
  // The interpreter reads any strides and alignment: nothing to specialize on.
  bool specializes_on_tensors() const override { return false; }
  Loaded compile(const KernelToCompile&) const override { return {}; }
};
}  // namespace

const Backend& backend() {
  static const CpuBackend b;
  return b;
}

}  // namespace tessera::backend::cpu
