// The SIMT path, host side: kernel declarations and contracts (kernel.hpp), modules of nvcc- or
// NVRTC-compiled kernels (module.hpp), prepare<K>() and launches (launch.hpp). Kernel bodies
// (.cu files, NVRTC sources) include tessera/simt/kernel.hpp only.
#pragma once

#include "tessera/simt/contract.hpp"
#include "tessera/simt/kernel.hpp"
#include "tessera/simt/launch.hpp"
#include "tessera/simt/module.hpp"
