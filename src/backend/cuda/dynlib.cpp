#include "dynlib.hpp"

#include <dlfcn.h>

namespace tessera::backend::cuda::internal {

void* open_first(const std::vector<std::string>& candidates, std::string* why) {
  std::string reasons;
  for (const std::string& name : candidates) {
    // RTLD_LOCAL: our symbols stay out of the global namespace, so a second copy loaded by
    // another library in the process (PyTorch's, say) does not clash with ours.
    if (void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
    const char* error = dlerror();
    if (!reasons.empty()) reasons += "; ";
    reasons += error ? error : name + ": not found";
  }
  if (why) *why = reasons;
  return nullptr;
}

void* find_symbol(void* library, const char* symbol) {
  return library ? dlsym(library, symbol) : nullptr;
}

std::string library_file(void* symbol_in_library) {
  Dl_info info{};
  if (symbol_in_library && dladdr(symbol_in_library, &info) != 0 && info.dli_fname)
    return info.dli_fname;
  return {};
}

}  // namespace tessera::backend::cuda::internal
