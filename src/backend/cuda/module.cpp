#include "tessera/backend/cuda/module.hpp"

#include <algorithm>

#include "tessera/backend/cuda/driver.hpp"
#include "tessera/core/error.hpp"

namespace tessera::backend::cuda {

LoadedKernel load_kernel(const DeviceContext& ctx, const std::vector<char>& cubin,
                         const std::string& name, const std::string& entry,
                         size_t dynamic_shared_bytes, bool error_report) {
  ctx.make_current();
  const std::string what = detail::cat("loading kernel '", name, "' on GPU cuda:", ctx.ordinal());
  if (cubin.empty()) fail<BackendError>("the compiled image of kernel '", name, "' is empty");

  LoadedKernel k;
  k.ctx = &ctx;
  k.name = name;
  k.entry = entry;
  CUmodule module = nullptr;
  TESSERA_CU_WHILE(what, cuModuleLoadData, &module, cubin.data());
  TESSERA_CU_WHILE(what + " (entry '" + entry + "')", cuModuleGetFunction, &k.function, module,
                   entry.c_str());

  // Looked up only for a kernel with a check that can fail: the host reads it after each launch
  // of such a kernel, and never otherwise.
  if (error_report) {
    size_t bytes = 0;
    TESSERA_CU_WHILE(what + " (its error report)", cuModuleGetGlobal, &k.error_flag, &bytes, module,
                     "tessera_error");
    TESSERA_CU_WHILE(what + " (its error report)", cuModuleGetGlobal, &k.error_info, &bytes,
                     module, "tessera_error_info");
  }

  auto attribute = [&](CUfunction_attribute a) {
    int value = 0;
    TESSERA_CU_WHILE(what, cuFuncGetAttribute, &value, a, k.function);
    return value;
  };
  k.max_threads_per_block = attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  k.static_shared_bytes = attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);

  const int64_t limit = ctx.props().shared_per_block_optin;
  const int64_t wanted = static_cast<int64_t>(dynamic_shared_bytes) + k.static_shared_bytes;
  if (wanted > limit)
    fail<LaunchError>("kernel '", name, "' needs ", wanted, " bytes of shared memory per block (",
                      dynamic_shared_bytes, " dynamic + ", k.static_shared_bytes,
                      " static), but GPU cuda:", ctx.ordinal(), " (", ctx.props().name,
                      ") allows at most ", limit, "; use smaller tiles");
  // Up to 48 KiB of dynamic shared memory needs no opt-in; beyond it the function must ask.
  if (wanted > ctx.props().shared_per_block)
    TESSERA_CU_WHILE(what, cuFuncSetAttribute, k.function,
                     CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                     static_cast<int>(dynamic_shared_bytes));
  k.max_dynamic_shared_bytes = static_cast<int>(std::max<int64_t>(
      dynamic_shared_bytes, ctx.props().shared_per_block - k.static_shared_bytes));
  return k;
}

}  // namespace tessera::backend::cuda
