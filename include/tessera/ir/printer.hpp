// The stable text form of the IR, for golden tests and TESSERA_DUMP=ir. Values are renumbered in
// program order, so the text depends only on the program, not on how passes allocated ids.
#pragma once

#include <string>

#include "tessera/ir/ir.hpp"

namespace tessera::ir {

std::string print(const Function& f);

}  // namespace tessera::ir
