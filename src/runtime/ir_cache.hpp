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
// there is none: TESSERA_IR_CACHE is not `on`, no build id, or a switch that wants the trace
// itself (TESSERA_CHECK=trace, TESSERA_DUMP=traced or ir, TESSERA_NVRTC_CHECK).
//
// Why off by default, on every backend: the key cannot see host state that the kernel body reads
// while it is traced (a command-line flag), so a later run would get the IR of the run that
// stored it, silently; within one process the trace-twice check and TESSERA_CHECK=trace catch
// such a body, across processes only TESSERA_CHECK=trace would. And it saves little: tracing
// costs what reading back does (measured on the CPU: a first launch call of 0.21 ms either way
// for a small kernel, 0.38 / 0.42 ms for a GEMM with a softmax epilogue). A program whose kernel
// bodies read no host state can turn it on.
std::string key(const void* identity, std::string_view specialization, Device device);

// The stored IR for `key`, compiled for `device`; null on a miss or an unusable entry.
std::shared_ptr<const CompiledKernel> find(const std::string& key, Device device,
                                           std::string_view label);
void store(const std::string& key, const CompiledKernel& kernel, std::string_view label);

}  // namespace tessera::runtime::ir_cache
