// A kernel loaded on a GPU, as the runtime launches it (gpu.hpp's opaque GpuKernel), and the
// reading of a launch's error report: shared by single launches (gpu_launch.cpp) and graph
// replays (gpu_graph.cpp). Private to the runtime.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "tessera/backend/cuda/event.hpp"
#include "tessera/backend/cuda/launch.hpp"
#include "tessera/backend/cuda/module.hpp"
#include "tessera/core/error.hpp"

namespace tessera::runtime {

class Completion;

namespace cuda = backend::cuda;

class GpuKernel {
 public:
  cuda::LoadedKernel loaded;
  std::vector<cuda::KernelParam> params;
  cuda::LaunchConfig config;
  std::vector<std::pair<SourceLoc, std::string>> op_sites;
  // A kernel with an error report writes it in its module, shared by all its launches: two of
  // them running at once on two streams could mix their errors. So a launch of such a kernel on
  // another stream than the one before it waits for that one, on the device.
  mutable std::mutex order_mu;
  mutable std::shared_ptr<Completion> last_launch;
  mutable void* last_stream = nullptr;
};

// Reads a launch's copy of its kernel's error report (`report`, kErrorReportBytes of device
// memory) once the launch is done, and throws the error it describes at the user's line.
void check_error_report(const GpuKernel& k, const void* report);

// Makes work queued next on `stream` (a CUstream) wait for `event`'s work, on the device: nothing
// when the event is on that stream (no driver call) or its work is done; a failed one is not
// waited for (its Completion's wait() reports the failure). On one stream the order is the
// stream's: for a tile kernel launched with programmatic stream serialization (sm_90+), that is
// its own griddepcontrol.wait before any global access, which waits for the whole kernel before
// it and its memory (backend/cuda/launch.cpp); a copy, memset or event wait before it is waited
// for as always.
void order_event_on(const cuda::Event& event, void* stream);

}  // namespace tessera::runtime
