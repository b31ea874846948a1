// The compiler pipeline, in one function: every stage named, verified, and dumpable with
// TESSERA_DUMP=<stage>[,<stage>...] (stages: traced, ir; "all" for every one), printed to stderr.
//
//   traced ──promote_locals──▶ SSA ──check_safety──▶ ──dce──▶ ir ──▶ backend
#pragma once

#include <memory>

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

}  // namespace tessera::runtime
