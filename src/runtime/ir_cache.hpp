// Compiled IR across processes: a specialization's IR (traced, promoted, checked, as compile()
// returns it) kept in the JIT cache folder under a key that is known before tracing, so that a
// later process launching the same kernel of the same binary with the same specialization reads
// it instead of tracing the body again. Private to the runtime (launch.cpp).
//
// Why the key can be known first: a specialization's trace is a function of the kernel body and
// its specialization key (the safety contract: docs/safety_tracing.md; a body whose trace is not
// is refused, or caught under TESSERA_CHECK=trace). The body is machine code in a module (the
// program or a shared library), so the module's build id, the kernel's place in it and the
// specialization key name the trace, and the build id of the module holding this runtime names the
// passes that made the IR. A module without a build id gets no key: it is traced as before.
//
// What still runs on a hit: every check of the launch itself (launch.cpp: arguments, ownership,
// overlaps, the device's limits) runs on every launch and needs no trace; the IR's own checks
// (verifier, check_safety) passed before it was stored, and the bytes are checksummed and the IR
// verified again when it is read.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "tessera/runtime/compile.hpp"

namespace tessera::runtime::ir_cache {

// The key for a kernel whose identity (KernelSite::identity) lives at `identity`, launched on
// `device` with `specialization` (the in-process key without the identity's address); "" when
// there is none: no build id, a switch that wants the trace itself (TESSERA_CHECK=trace,
// TESSERA_DUMP=traced or ir, TESSERA_NVRTC_CHECK), TESSERA_IR_CACHE=off, or the CPU backend
// without TESSERA_IR_CACHE=on.
//
// Why not the CPU by default: there the IR is all there is to compile, and tracing it costs
// what reading it back does (measured: a first launch call of 0.21 ms either way for a small
// kernel, 0.38 / 0.42 ms for a GEMM with a softmax epilogue), while every process would write
// entries into the cache folder. On a GPU it saves the trace and the passes before the compiled
// module is read from the disk cache.
std::string key(const void* identity, std::string_view specialization, Device device);

// The stored IR for `key`, compiled for `device`; null on a miss or an unusable entry.
std::shared_ptr<const CompiledKernel> find(const std::string& key, Device device,
                                           std::string_view label);
void store(const std::string& key, const CompiledKernel& kernel, std::string_view label);

}  // namespace tessera::runtime::ir_cache
