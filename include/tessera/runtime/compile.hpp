// The compiler's IR passes, in one function: every pass named, verified, timed
// (TESSERA_LOG=compile) and dumpable (TESSERA_DUMP).
//
//   traced ──promote_locals──▶ SSA ──canonical_order──▶ ──check_safety──▶ ──dce──▶ ir ──▶ backend
//
// The whole compile of a launch's specialization — trace, these passes, lowering to CUDA C++,
// NVRTC, load — is one function too: compile_specialization (src/runtime/compile_pipeline.cpp).
//
// TESSERA_DUMP=<stage>[,<stage>...] ("all" for every one) shows what each stage made:
//   traced           the IR as traced (stderr)
//   promote_locals   after local variables became SSA values (stderr)
//   canonical_order  after ops were put in a canonical order (stderr)
//   ir               the IR the backends get: checked, dead code removed (stderr)
//   layouts          the CUDA lowering's form: each value's layout, conversions as ops (files)
//   cuda             the generated CUDA C++, with its shared-memory plan (files)
//   ptx              NVRTC's PTX (files)
//   cubin            NVRTC's cubin, for `cuobjdump -sass` (files)
// Files go to TESSERA_DUMP_DIR (default ./tessera-dump) as <kernel>.<hash>.<ext>; with
// TESSERA_NVRTC_CHECK=sm_80,sm_90a as <kernel>.<arch>[.unaligned].<hash>.<ext>.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/ir/ir.hpp"
#include "tessera/runtime/device.hpp"

namespace tessera::runtime {

struct CompiledKernel {
  ir::Function fn;  // promoted, verified, safe
  Device device;
};

std::shared_ptr<const CompiledKernel> compile(ir::Function traced, Device device);

// The stages TESSERA_DUMP knows, in pipeline order.
const std::vector<std::string_view>& dump_stages();
// The names in TESSERA_DUMP that are no stage (typos), in order.
std::vector<std::string> unknown_dump_stages();
// True when TESSERA_DUMP names `stage` (or "all"). The first call says, on stderr, which names
// of TESSERA_DUMP are no stage.
bool dump_enabled(std::string_view stage);

// Where TESSERA_DUMP=cuda,ptx files go: TESSERA_DUMP_DIR, else ./tessera-dump.
std::string dump_dir();
// When TESSERA_DUMP names `stage`, writes `text` to <dump_dir>/<name>.<hash of key><ext> and
// says where on stderr.
void dump_file(std::string_view stage, const std::string& name, const std::string& key,
               std::string_view ext, std::string_view text);

}  // namespace tessera::runtime
