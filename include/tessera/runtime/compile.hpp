// The compiler pipeline, in one function: every stage named, verified, and dumpable with
// TESSERA_DUMP=<stage>[,<stage>...] (stages: traced, ir; "all" for every one), printed to stderr.
//
//   traced ──promote_locals──▶ SSA ──check_safety──▶ ──dce──▶ ir ──▶ backend
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "tessera/ir/ir.hpp"
#include "tessera/runtime/device.hpp"

namespace tessera::runtime {

struct CompiledKernel {
  ir::Function fn;  // promoted, verified, safe
  Device device;
};

std::shared_ptr<const CompiledKernel> compile(ir::Function traced, Device device);

// True when TESSERA_DUMP names `stage` (or "all").
bool dump_enabled(std::string_view stage);

// Where TESSERA_DUMP=cuda,ptx files go: TESSERA_DUMP_DIR, else ./tessera-dump.
std::string dump_dir();
// When TESSERA_DUMP names `stage`, writes `text` to <dump_dir>/<name>.<hash of key><ext> and
// says where on stderr.
void dump_file(std::string_view stage, const std::string& name, const std::string& key,
               std::string_view ext, std::string_view text);

}  // namespace tessera::runtime
