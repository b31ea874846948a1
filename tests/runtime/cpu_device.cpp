// Every runtime test runs on the CPU reference backend, whatever machine runs it: the device is
// chosen (once per process, on first use) from TESSERA_DEVICE, set here before main.
#include <cstdlib>

namespace {
const bool kOnCpu = [] { return setenv("TESSERA_DEVICE", "cpu", 1) == 0; }();
}  // namespace
