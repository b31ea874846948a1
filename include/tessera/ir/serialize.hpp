// A Function as bytes and back, so that a compiled specialization can be kept on disk and a later
// process can skip tracing it (runtime/launch.cpp). The bytes are for this build of Tessera only:
// the runtime keys them by the binary's build id, so no format is promised across versions.
//
// deserialize() trusts nothing: every count, index and enum is checked against what the bytes
// hold and what the op table allows, and the result is verified; damaged bytes give nullopt,
// never a crash or a Function that breaks the verifier's invariants.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "tessera/ir/ir.hpp"

namespace tessera::ir {

std::string serialize(const Function& f);
std::optional<Function> deserialize(std::string_view bytes);

}  // namespace tessera::ir
