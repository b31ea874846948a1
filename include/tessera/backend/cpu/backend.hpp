// The CPU reference backend as the runtime calls it (backend.hpp): its compile makes nothing, since
// the interpreter (interpreter.hpp) runs the checked IR itself.
#pragma once

#include "tessera/backend/backend.hpp"

namespace tessera::backend::cpu {

const Backend& backend();

}  // namespace tessera::backend::cpu
