#include "tessera/runtime/compile.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>

#include "compile_log.hpp"
#include "tessera/analysis/canonical_order.hpp"
#include "tessera/analysis/dce.hpp"
#include "tessera/analysis/promote_locals.hpp"
#include "tessera/analysis/safety.hpp"
#include "tessera/backend/backend.hpp"
#include "tessera/ir/printer.hpp"
#include "tessera/ir/verifier.hpp"
#include "tessera/runtime/env.hpp"
#include "tessera/runtime/jit_cache.hpp"

namespace tessera::runtime {

const std::vector<std::string_view>& dump_stages() {
  static const std::vector<std::string_view> stages = {
      "traced", "promote_locals", "canonical_order", "ir", "layouts", "cuda", "ptx", "cubin"};
  return stages;
}

std::vector<std::string> unknown_dump_stages() {
  std::vector<std::string> unknown;
  const auto& known = dump_stages();
  for (std::string_view item : env_list("TESSERA_DUMP"))
    if (item != "all" && std::find(known.begin(), known.end(), item) == known.end())
      unknown.emplace_back(item);
  return unknown;
}

bool dump_enabled(std::string_view stage) {
  // A name that is no stage (a typo) is said once, with the names there are; it is not an error:
  // a debugging switch does not stop the program.
  static std::once_flag checked;
  std::call_once(checked, [] {
    std::string names;
    for (std::string_view k : dump_stages()) names += detail::cat(names.empty() ? "" : ", ", k);
    for (const std::string& item : unknown_dump_stages())
      std::cerr << "tessera: TESSERA_DUMP names '" << item
                << "', which is no stage; the stages are " << names << " (or all)\n";
  });
  return env_list_has("TESSERA_DUMP", stage);
}

std::string dump_dir() {
  const char* env = std::getenv("TESSERA_DUMP_DIR");
  return env && *env ? env : "tessera-dump";
}

void dump_file(std::string_view stage, const std::string& name, const std::string& key,
               std::string_view ext, std::string_view text) {
  if (!dump_enabled(stage)) return;
  namespace fs = std::filesystem;
  const fs::path dir = dump_dir();
  const fs::path file = dir / detail::cat(name, ".", hex64(fnv1a64(key)).substr(0, 8), ext);
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out)
    std::cerr << "tessera: TESSERA_DUMP=" << stage << ": cannot write " << file << "\n";
  else
    std::cerr << "tessera: TESSERA_DUMP=" << stage << ": wrote " << file << "\n";
}

namespace {
void dump(std::string_view stage, const ir::Function& f) {
  if (dump_enabled(stage)) std::cerr << "// ---- " << stage << " ----\n" << ir::print(f);
}
}  // namespace

std::shared_ptr<const CompiledKernel> compile(ir::Function f, Device device) {
  const std::string name = f.name;
  dump("traced", f);
  timed(name, "verify", [&] { ir::verify_or_throw(f, "tracing"); });
  timed(name, "promote_locals", [&] {
    analysis::promote_locals(f);
    ir::verify_or_throw(f, "promote_locals");
  });
  dump("promote_locals", f);
  timed(name, "canonical_order", [&] {
    analysis::canonical_order(f);  // from here on, the IR is the same whatever compiler traced it
    ir::verify_or_throw(f, "canonical_order");
  });
  dump("canonical_order", f);
  timed(name, "check_safety", [&] { analysis::check_safety(f); });
  timed(name, "dce", [&] {
    analysis::dce(f);
    ir::verify_or_throw(f, "dce");
  });
  dump("ir", f);
  // TESSERA_NVRTC_CHECK=sm_80,sm_90a: the CUDA backend also compiles it for those architectures
  // (not run), whatever device it runs on: how CI, with no GPU, checks the GPU code.
  for (const backend::Backend* b : backend::registered_backends()) b->check_compiles(f);
  return std::make_shared<const CompiledKernel>(CompiledKernel{std::move(f), device});
}

}  // namespace tessera::runtime
