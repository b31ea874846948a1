#include "tessera/runtime/compile.hpp"

#include <cstdlib>
#include <iostream>

#include "tessera/analysis/dce.hpp"
#include "tessera/analysis/promote_locals.hpp"
#include "tessera/analysis/safety.hpp"
#include "tessera/ir/printer.hpp"
#include "tessera/ir/verifier.hpp"

namespace tessera::runtime {

bool dump_enabled(std::string_view stage) {
  const char* env = std::getenv("TESSERA_DUMP");
  if (!env) return false;
  std::string_view list(env);
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    if (item == stage || item == "all") return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

namespace {
void dump(std::string_view stage, const ir::Function& f) {
  if (dump_enabled(stage)) std::cerr << "// ---- " << stage << " ----\n" << ir::print(f);
}
}  // namespace

std::shared_ptr<const CompiledKernel> compile(ir::Function f, Device device) {
  dump("traced", f);
  ir::verify_or_throw(f, "tracing");
  analysis::promote_locals(f);
  ir::verify_or_throw(f, "promote_locals");
  analysis::check_safety(f);
  analysis::dce(f);
  ir::verify_or_throw(f, "dce");
  dump("ir", f);
  return std::make_shared<const CompiledKernel>(CompiledKernel{std::move(f), device});
}

}  // namespace tessera::runtime
